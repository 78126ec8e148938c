"""Makes a sentence-transformers folder truncate like sentence-transformers when transformers.js loads it.

    python transformersjs_layout.py MODEL_DIR

transformers.js truncates to tokenizer_config.json's model_max_length (512 here, the position limit), while
sentence-transformers truncates to sentence_bert_config.json's max_seq_length (256 for all-MiniLM-L6-v2, the
length it was trained on). Copying the latter into the former makes both embed a long chunk from the same tokens.
"""
import json
import sys
from pathlib import Path


def limit_to_trained_length(model_dir: Path) -> None:
    max_seq_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    config_path = model_dir / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["model_max_length"] = max_seq_length
    config_path.write_text(json.dumps(config, indent=2) + "\n")


if __name__ == "__main__":
    limit_to_trained_length(Path(sys.argv[1]))
