"""A transition-based BiLSTM parser (Kiperwasser & Goldberg 2016): arc-hybrid transitions scored
by an MLP over the BiLSTM vectors of the top three stack words and the first buffer word.

:mod:`parsing.lstm_transition.network` holds the torch network, :mod:`parsing.lstm_transition.member`
the ``lstm-hybrid`` member. The transition system, its static oracle, the labelled action space
and the beam search are the ``neural`` member's (:mod:`parsing.neural`); what differs is what
scores the actions: the words' vectors in their sentence, not embeddings of a fixed window.
"""
