"""The ISBN ensemble member (issue #18): Titov's (2008, ch. 5) feed-forward incremental sigmoid
belief network dependency parser, discriminative, in numpy.

Modules: :mod:`~parsing.isbn.system` (arc-eager wrapper), :mod:`~parsing.isbn.structure`
(the 7 latent-to-latent relations), :mod:`~parsing.isbn.encoding` (explicit features),
:mod:`~parsing.isbn.oracle` (gold derivations), :mod:`~parsing.isbn.network` (the model and its
batched back-propagation), :mod:`~parsing.isbn.training` (mini-batches), :mod:`~parsing.isbn.beam`
(beam search pruned after each shift), :mod:`~parsing.isbn.parser` (the estimator).
"""

from parsing.isbn.parser import ISBNParser

__all__ = ["ISBNParser"]
