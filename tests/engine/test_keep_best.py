"""Trainer.fit(keep_best=True): a late divergence is not what the checkpoint keeps."""

from __future__ import annotations

import torch

from v22sdk.engine.config import preset
from v22sdk.engine.data import load_dataset, make_split
from v22sdk.engine.train import Trainer
from v22sdk.engine.vocab import OutputVocab


def test_keep_best_restores_the_best_validated_state(registry, text_manifest):
    ds = load_dataset(text_manifest, registry)
    split = make_split(ds.examples, 0, val_frac=0.3, test_frac=0.0)
    split["val"] = split["train"][:4]  # memorised pairs: val exact rises with training
    vocab = OutputVocab.build([e.target for e in ds.examples], use_text_plugin=False)
    trainer = Trainer(preset("tiny", epochs=30, batch_size=4, stop_loss=0.0), ds, split, vocab)

    def wreck(rec):  # at epoch 25 the model is destroyed
        if rec["epoch"] == 25:
            with torch.no_grad():
                for p in trainer.model.parameters():
                    p.mul_(0.0)

    trainer.fit(eval_every=5, on_epoch=wreck, keep_best=True)
    vals = {h["epoch"]: h["val"]["exact"] for h in trainer.history if "val" in h}
    assert vals[30] < max(vals.values())  # the last state is worse ...
    assert trainer.best_epoch in vals and vals[trainer.best_epoch] == max(vals.values())
    assert trainer.evaluate("val")["all"]["exact"] == max(vals.values())  # ... and is not the one kept
