import sys

from fairviz.cli.main import main

sys.exit(main())
