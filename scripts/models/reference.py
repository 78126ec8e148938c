"""Writes reference.json into a fetched model folder: a few texts and the embeddings the Python reference
implementation gives them, so our TypeScript embedders can be checked against it (packages/core/test/embedders/
*.real.test.ts).

    python reference.py sentence-transformers MODEL_DIR   # SentenceTransformer: Transformer, mean Pooling, Normalize
    python reference.py model2vec MODEL_DIR               # model2vec StaticModel.encode
"""
import json
import sys
from pathlib import Path

# Longer than 256 word pieces, so the reference and our embedder must truncate at the same token.
LONG_TEXT = " ".join(
    [
        "The ingestion job lists the bucket, converts each changed document to Markdown, splits it into",
        "header-aware chunks of about 1200 characters with 200 characters of overlap, and embeds every chunk",
        "with the dense model recorded in the collection. Sparse BM25 vectors are computed beside the dense ones,",
        "so hybrid search can fuse both rankings with reciprocal rank fusion. A chunk keeps its source, its",
        "heading path and its page, so an answer can cite exactly where a passage came from.",
    ]
    * 3
)

TEXTS = [
    "How do I rotate the API key of the retrieval service?",
    "What is the procedure for changing the retrieval service's API key?",
    "The cat slept all afternoon on the warm windowsill.",
    "Ünïcödé façade: a naïve café in 東京, with an emoji 🚀 and CJK 検索拡張生成.",
    "hello",
    LONG_TEXT,
]


def sentence_transformers_embeddings(model_dir: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_dir), device="cpu").encode(TEXTS, batch_size=len(TEXTS))


def model2vec_embeddings(model_dir: Path):
    from model2vec import StaticModel

    return StaticModel.from_pretrained(str(model_dir)).encode(TEXTS)


PRODUCERS = {"sentence-transformers": sentence_transformers_embeddings, "model2vec": model2vec_embeddings}


def write_reference(producer: str, model_dir: Path) -> None:
    embeddings = PRODUCERS[producer](model_dir)
    reference = {
        "producer": producer,
        "texts": TEXTS,
        "embeddings": [[float(value) for value in row] for row in embeddings],
    }
    (model_dir / "reference.json").write_text(json.dumps(reference))


if __name__ == "__main__":
    write_reference(sys.argv[1], Path(sys.argv[2]))
