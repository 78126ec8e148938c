"""Exports a BERT-style sentence encoder (safetensors, Hugging Face layout) to ONNX in the layout transformers.js
loads from a local folder: onnx/model.onnx beside config.json and the tokenizer files.

    python export_onnx.py MODEL_DIR

The graph takes input_ids, attention_mask and token_type_ids ([batch, sequence], both axes dynamic) and returns
last_hidden_state; pooling (mean over real tokens, then L2 normalisation, as the model's sentence-transformers
modules say) is done by the caller, our LocalOnnxEmbedder. The TorchScript exporter (dynamo=False) is used
because it handles the dynamic axes of this plain encoder without the extra onnxscript stack.
"""
import sys
from pathlib import Path

import torch
from transformers import AutoModel

OPSET = 17
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


class LastHiddenState(torch.nn.Module):
    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state


def export(model_dir: Path) -> Path:
    # Eager attention traces to plain MatMul/Softmax ops that every ONNX Runtime build runs.
    encoder = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    sample = torch.ones((2, 8), dtype=torch.long)
    target = model_dir / "onnx" / "model.onnx"
    target.parent.mkdir(parents=True, exist_ok=True)
    dynamic = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(
            LastHiddenState(encoder),
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=INPUTS,
            output_names=["last_hidden_state"],
            dynamic_axes={**{name: dynamic for name in INPUTS}, "last_hidden_state": dynamic},
            opset_version=OPSET,
            dynamo=False,
        )
    return target


if __name__ == "__main__":
    print(export(Path(sys.argv[1])))
