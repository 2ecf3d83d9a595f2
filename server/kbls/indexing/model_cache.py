"""A load-ready copy of the bundled int8 model: optimized once, its float weights mapped from a file.

Building an onnxruntime session of the int8 MiniLM folds its DequantizeLinear nodes into ~90 MB
of float weights, while the parsed model is still held: the session keeps ~156 MB and building
it peaks ~55 MB higher (2026-12-01, onnxruntime 1.32). Saved once with its weights in an
external data file, the optimized graph loads with nothing left to fold and onnxruntime maps
those weights from the file instead of copying them: the session keeps ~75 MB, the peak of
building it is ~50 MB, and the outputs are the same bit for bit (the same graph runs).

The copy is built by a child process, so that no long-lived kbls process holds the folding peak,
into `KBLS_MODEL_CACHE` (default: the user cache's `models/prepared/`), one folder per source
model and onnxruntime version (its fused operators are that version's). A manifest written last
records the sha256 of each file, checked before every use; a copy that fails the check is built
again. Whatever goes wrong, the caller loads the original model as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

from kbls.config import user_cache_dir
from kbls.hashing import file_sha256

log = logging.getLogger(__name__)

#: environment variable naming the folder of prepared models (tests share one per session).
CACHE_ENV = "KBLS_MODEL_CACHE"
MODEL_FILE = "model.onnx"
DATA_FILE = "model.onnx.data"
MANIFEST_FILE = "manifest.json"
#: a child that builds the copy for longer than this has hung (it takes ~2 s).
BUILD_TIMEOUT_S = 300.0
#: initializers at least this large go to the data file (and are mapped): all the weights.
_EXTERNAL_MIN_BYTES = 1024


class Manifest(msgspec.Struct, kw_only=True, frozen=True):
    """What a prepared copy was built from, and the sha256 of each of its files."""

    source_sha256: str
    onnxruntime: str
    files: dict[str, str]


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or user_cache_dir() / "models" / "prepared")


def _onnxruntime_version() -> str:
    import onnxruntime as ort

    return str(ort.__version__)


def prepared_folder(source_sha256: str) -> Path:
    """Where the copy of the model with this digest lives for the installed onnxruntime."""
    return cache_root() / f"{source_sha256[:16]}-ort{_onnxruntime_version()}"


def verified(folder: Path, source_sha256: str) -> Path | None:
    """The model file of `folder` if its manifest matches the source and every file its digest."""
    try:
        manifest = msgspec.json.decode((folder / MANIFEST_FILE).read_bytes(), type=Manifest)
        if manifest.source_sha256 != source_sha256 or manifest.onnxruntime != _onnxruntime_version():
            return None
        if set(manifest.files) != {MODEL_FILE, DATA_FILE}:
            return None
        if any(file_sha256(folder / name) != digest for name, digest in manifest.files.items()):
            return None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return folder / MODEL_FILE


def prepared_model(source: Path, source_sha256: str) -> Path | None:
    """The load-ready copy of `source` (whose sha256 the caller checked), built if missing;
    None when it cannot be had (read-only cache, full disk, a failing build): load `source`."""
    folder = prepared_folder(source_sha256)
    found = verified(folder, source_sha256)
    if found is not None:
        return found
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "kbls.indexing.model_cache", str(source), source_sha256, str(folder)],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("cannot prepare the model in %s: %s; loading the original", folder, exc)
        return None
    if done.returncode != 0:
        log.warning("cannot prepare the model in %s (exit %s): %s; loading the original",
                    folder, done.returncode, done.stderr.strip()[-2000:])
        return None
    found = verified(folder, source_sha256)
    if found is None:
        log.warning("the prepared model in %s does not verify; loading the original", folder)
    return found


def build(source: Path, source_sha256: str, folder: Path) -> None:
    """Optimize `source` into `folder` (atomically: built beside it, then renamed into place).

    :raises ValueError: `source` does not have the digest `source_sha256`.
    """
    import onnxruntime as ort

    if file_sha256(source) != source_sha256:
        raise ValueError(f"{source} does not have the sha256 {source_sha256}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        options = ort.SessionOptions()
        # EXTENDED, not ALL: what ALL adds is layout work for the machine at hand, done again at
        # each load; the saved graph stays portable between machines sharing a home folder.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.intra_op_num_threads = 1
        options.optimized_model_filepath = str(work / MODEL_FILE)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", DATA_FILE)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", str(_EXTERNAL_MIN_BYTES)
        )
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        manifest = Manifest(
            source_sha256=source_sha256, onnxruntime=str(ort.__version__),
            files={name: file_sha256(work / name) for name in (MODEL_FILE, DATA_FILE)},
        )
        (work / MANIFEST_FILE).write_bytes(msgspec.json.encode(manifest))
        if verified(folder, source_sha256) is None:
            shutil.rmtree(folder, ignore_errors=True)  # a broken copy
            with contextlib.suppress(OSError):  # another process won the race: theirs is as good
                work.rename(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _remove_stale(folder)


def _remove_stale(current: Path) -> None:
    """Copies for other onnxruntime versions of the same model: never loaded again."""
    model_prefix = current.name.split("-ort", 1)[0]
    for other in current.parent.glob(f"{model_prefix}-ort*"):
        if other != current and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


def main(argv: list[str]) -> int:
    """`python -m kbls.indexing.model_cache SOURCE SHA256 FOLDER`: the child's entry point."""
    source, source_sha256, folder = argv
    build(Path(source), source_sha256, Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
