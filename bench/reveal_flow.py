"""Does a revealed arc reach the other words? The greedy UAS of the words NOT revealed, for a
``biaffine`` member trained with ``reveal`` (issue #33), when some dev arcs are given as inputs.

Two checks on a trained model directory (``bench/simulate_edits.py`` writes them under
``bench/out/simulate_edits_models/SETUP/TREEBANK``): gold arcs revealed at random at rates 0,
0.1, 0.3 and 0.5 (the UAS of the unrevealed words, each word's best head, no tree), and 30% /
100% of the model's own wrong heads revealed (the UAS of the other words before and after). Only
the network's scores are read: no decoding, nothing forced.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python bench/reveal_flow.py MODEL_DIR DEV.conllu
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import torch

from parsing.biaffine.batching import IGNORE, encode
from parsing.biaffine.training import batches
from parsing.conllu_io import load_sentences
from parsing.constraints import Constraints
from parsing.pipeline import load_models


def unrevealed_heads(network: Any, vocabularies: Any, group: list[Any],
                     given: list[Constraints]) -> tuple[Any, Any, Any]:
    """Each word's best head with ``given`` revealed, the gold heads (both ``(B, n+1)``) and the
    mask of the words scored: those with a gold head that were not revealed."""
    batch = encode(group, vocabularies, given=given)
    states, _ = network.encode(batch)
    heads = network.arc_scores(states, batch.lengths, batch.given_positions).argmax(-1)
    target = batch.targets["heads"]
    return heads, target, (target != IGNORE) & (batch.given_heads == 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model directory with a biaffine member")
    parser.add_argument("dev", help="gold CoNLL-U file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    member = load_models(args.model).parsers["biaffine"]
    gold = load_sentences(args.dev)
    network, vocabularies = member._network()
    rng = np.random.default_rng(0)
    with torch.inference_mode():
        for rate in (0.0, 0.1, 0.3, 0.5):
            right = total = 0
            for group in batches(gold, 64, None):
                given = []
                for sentence in group:
                    drawn = rng.random(len(sentence)) < rate
                    given.append(Constraints({d: int(sentence.heads[d]) for d in range(1, len(sentence) + 1)
                                              if drawn[d - 1]}))
                heads, target, scored = unrevealed_heads(network, vocabularies, group, given)
                right += int(((heads == target) & scored).sum())
                total += int(scored.sum())
            print(f"random {rate:.1f}: UAS of the unrevealed words {100 * right / total:.2f} ({total} words)")
        for rate in (0.3, 1.0):
            right = before = total = 0
            for group in batches(gold, 64, None):
                plain = encode(group, vocabularies)
                states, _ = network.encode(plain)
                first = network.arc_scores(states, plain.lengths).argmax(-1)
                given = []
                for i, sentence in enumerate(group):
                    wrong = [d for d in range(1, len(sentence) + 1)
                             if int(first[i, d]) != int(sentence.heads[d]) and rng.random() < rate]
                    given.append(Constraints({d: int(sentence.heads[d]) for d in wrong}))
                heads, target, scored = unrevealed_heads(network, vocabularies, group, given)
                right += int(((heads == target) & scored).sum())
                before += int(((first == target) & scored).sum())
                total += int(scored.sum())
            print(f"own errors {rate:.1f}: UAS of the other words {100 * before / total:.2f} -> "
                  f"{100 * right / total:.2f} ({total} words)")


if __name__ == "__main__":
    main()
