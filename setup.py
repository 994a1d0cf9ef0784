"""Only what pyproject.toml cannot say: the bundled samples (assets/ at the repository root) travel inside the
package as ``fairviz/assets``, so an installed ``fairviz audit`` knows them (``fairviz.data.samples``)."""
from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["fairviz*"]), "fairviz.assets"], package_dir={"fairviz.assets": "assets"})
