"""Distils a Model2Vec static embedding model from a sentence encoder folder, offline.

    python distill_static.py ENCODER_DIR OUT_DIR

model2vec's distill() embeds every vocabulary token with the encoder, reduces the vectors with PCA to 256
dimensions and weights them by token rank (SIF); the result loads with our Model2VecEmbedder and with
model2vec's StaticModel. See https://github.com/MinishLab/model2vec (distill/distillation.py).
"""
import json
import sys
from pathlib import Path

from model2vec.distill import distill

PCA_DIMS = 256
SOURCE_ID = "sentence-transformers/all-MiniLM-L6-v2"


def distil(encoder_dir: Path, out_dir: Path) -> None:
    model = distill(model_name=str(encoder_dir), pca_dims=PCA_DIMS)
    model.save_pretrained(str(out_dir))
    # distill() records the local source path; name the upstream model instead, so the folder says what it is.
    config_path = out_dir / "config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_name"] = SOURCE_ID
    config_path.write_text(json.dumps(config, indent=4))


if __name__ == "__main__":
    distil(Path(sys.argv[1]), Path(sys.argv[2]))
