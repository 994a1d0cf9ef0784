"""Local models on a shared server: only the folders whoever runs it lists, loaded without remote code, and a
broken folder ends in one message that names the folder, not its path."""
from __future__ import annotations

import os

import pytest

from fairviz.data import DataError
from fairviz.explain.models import ModelParams, load, offered_model_dirs


def test_offered_folders_come_from_the_setting_only(tmp_path):
    root = tmp_path / "models"
    for name in ("bert-a", "bert-b"):
        (root / name).mkdir(parents=True)
        (root / name / "config.json").write_text("{}")
    (root / "not-a-model").mkdir()
    single = tmp_path / "solo"
    single.mkdir()
    (single / "config.json").write_text("{}")
    offered = offered_model_dirs(f"{root}{os.pathsep}{single}{os.pathsep}{tmp_path / 'missing'}")
    assert list(offered) == ["bert-a", "bert-b", "solo"]
    assert offered["solo"] == single.resolve()
    assert offered_model_dirs("") == {}


def test_a_broken_model_folder_is_one_message_without_the_path(tmp_path):
    folder = tmp_path / "secret-place" / "broken-model"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')          # no tokenizer, no weights
    with pytest.raises(DataError) as err:
        load(ModelParams(kind="local", path=str(folder)), device="cpu")
    message = " ".join(err.value.problems)
    assert "'broken-model'" in message and "secret-place" not in message and str(tmp_path) not in message
    assert ModelParams(kind="local", path=str(folder)).describe().startswith("local model broken-model")
