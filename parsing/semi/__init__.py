"""Learning from what the parsers already say: which sentences annotators should see first
(:mod:`~parsing.semi.selection`), automatic training trees from the ensemble or each member
(:mod:`~parsing.semi.self_training`) and simulated annotation rounds that measure both
(:mod:`~parsing.semi.simulate`)."""
