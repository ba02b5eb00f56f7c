"""A local pretrained encoder (a BERT-like model directory) as extra word input of the biaffine
member (setting ``encoder=DIRECTORY``), loaded without network access.

The directory is what ``save_pretrained`` writes (``config.json``, the weights, the tokenizer's
files): :func:`load_encoder` reads it with Hugging Face ``transformers``' ``AutoTokenizer`` and
``AutoModel`` and ``local_files_only=True``, so nothing is downloaded. Each word is split into
subword pieces; a sentence's pieces (with the tokenizer's own start and end tokens) go through
the model, and a word's vector is the **average of its pieces' last hidden layer**. The encoder
is not trained (it stays frozen on a CPU); its vectors are computed once per sentence and kept
while training (``4 * hidden_size`` bytes per word).

``transformers`` is optional: without it, :func:`parsing.biaffine.require_transformers` says
what to install.
The model file of the member holds the directory's path, not the encoder: parsing needs the
directory at the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from parsing.biaffine import require_transformers
from parsing.types import Sentence


class ContextualEmbedder:
    """Word vectors ``(n + 1, hidden_size)`` per sentence (ROOT's row zeros) from a frozen encoder.

    Args:
        tokenizer, model: a Hugging Face tokenizer and model (:func:`load_encoder`); the model
            is called as ``model(input_ids=..., attention_mask=...)`` and its output's
            ``last_hidden_state`` read.
        cache: keep each sentence's vectors (by its forms) for the next call (training reads
            every sentence once per epoch).
    """

    def __init__(self, tokenizer: Any, model: Any, *, cache: bool = False) -> None:
        self.tokenizer = tokenizer
        self.model = model
        self.dim = int(model.config.hidden_size)
        self.cache: dict[tuple[str, ...], Tensor] | None = {} if cache else None
        limit = getattr(tokenizer, "model_max_length", 512)
        self.max_pieces = max(8, min(int(limit) if isinstance(limit, int) else 512, 512) - 2)

    def _pieces(self, word: str) -> list[int]:
        ids = self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(word))
        if not ids:  # a word the tokenizer drops (a control character): its unknown token
            ids = [self.tokenizer.unk_token_id if self.tokenizer.unk_token_id is not None else 0]
        return [int(i) for i in ids][: self.max_pieces]

    def _frame(self, ids: list[int]) -> tuple[list[int], int]:
        """``ids`` with the tokenizer's start and end tokens, and how many came before them."""
        start = [t for t in (self.tokenizer.cls_token_id,) if t is not None] or \
            [t for t in (self.tokenizer.bos_token_id,) if t is not None]
        end = [t for t in (self.tokenizer.sep_token_id,) if t is not None] or \
            [t for t in (self.tokenizer.eos_token_id,) if t is not None]
        return [*start, *ids, *end], len(start)

    def _windows(self, words: Sequence[str]) -> list[list[list[int]]]:
        """The words' pieces, cut into runs of at most :attr:`max_pieces` pieces (a long
        sentence is encoded in parts)."""
        windows: list[list[list[int]]] = [[]]
        size = 0
        for word in words:
            pieces = self._pieces(word)
            if size + len(pieces) > self.max_pieces and windows[-1]:
                windows.append([])
                size = 0
            windows[-1].append(pieces)
            size += len(pieces)
        return windows

    def _encode(self, sentences: Sequence[Sentence]) -> list[Tensor]:
        """Vectors ``(n + 1, dim)`` of each sentence, by one padded pass of all their windows."""
        runs: list[tuple[int, list[list[int]]]] = [(s, window) for s, sentence in enumerate(sentences)
                                                   for window in self._windows(sentence.forms[1:])]
        framed = [self._frame([i for pieces in window for i in pieces]) for _, window in runs]
        width = max(len(ids) for ids, _ in framed)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in framed], dtype=torch.long)
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in framed],
                            dtype=torch.long)
        with torch.inference_mode():
            hidden = self.model(input_ids=input_ids, attention_mask=mask).last_hidden_state.float()
        words: list[list[Tensor]] = [[torch.zeros(self.dim)] for _ in sentences]
        for row, ((s, window), (_, offset)) in enumerate(zip(runs, framed, strict=True)):
            at = offset
            for pieces in window:
                words[s].append(hidden[row, at:at + len(pieces)].mean(dim=0))
                at += len(pieces)
        return [torch.stack(vectors) for vectors in words]

    def __call__(self, sentences: Sequence[Sentence]) -> Tensor:
        """The vectors of ``sentences``, zero-padded: shape ``(B, max(n) + 1, dim)``."""
        found: dict[int, Tensor] = {}
        todo = []
        for b, sentence in enumerate(sentences):
            kept = self.cache.get(tuple(sentence.forms)) if self.cache is not None else None
            if kept is not None:
                found[b] = kept
            else:
                todo.append(b)
        for start in range(0, len(todo), 32):
            chunk = todo[start:start + 32]
            for b, vectors in zip(chunk, self._encode([sentences[b] for b in chunk]), strict=True):
                found[b] = vectors
                if self.cache is not None:
                    self.cache[tuple(sentences[b].forms)] = vectors
        width = max(len(s) for s in sentences) + 1
        out = torch.zeros(len(sentences), width, self.dim)
        for b, vectors in found.items():
            out[b, :vectors.shape[0]] = vectors
        return out


def load_encoder(directory: str | Path, *, cache: bool = False) -> ContextualEmbedder:
    """The encoder saved in ``directory`` (``AutoTokenizer``/``AutoModel`` with
    ``local_files_only=True``: no network), in evaluation mode.

    Raises:
        ImportError: ``transformers`` is not installed (saying what to install).
        FileNotFoundError: ``directory`` is not a directory.
        ValueError: ``transformers`` cannot load a model or tokenizer from it (its reason).
    """
    transformers: Any = require_transformers()
    folder = Path(directory)
    if not folder.is_dir():
        raise FileNotFoundError(f"no encoder directory at {folder}")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"the encoder directory {folder} holds no model and tokenizer that transformers "
                         f"can load without the network: {error}") from None
    model.eval()
    return ContextualEmbedder(tokenizer, model, cache=cache)
