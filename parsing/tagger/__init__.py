"""The UPOS tagger that gives the parsers their tags when gold tags are missing.

* :mod:`parsing.tagger.model`: :class:`~parsing.tagger.model.Tagger`, an averaged structured
  perceptron (UPOS, and on request XPOS and FEATS).
* :mod:`parsing.tagger.features`: stable hashed feature keys per word.
* :mod:`parsing.tagger.sequence`: the averaged weights and the sequence decoders.
* :mod:`parsing.tagger.storage`: one ``.npz`` model file, arrays plus a JSON header (no pickle).
"""
