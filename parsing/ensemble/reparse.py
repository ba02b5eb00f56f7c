"""Re-parse sentences under human arcs: every member constrained, the ensemble forced.

One home for the step the editor runs after each human edit
(:meth:`parsing.pipeline.ModelBundle.parse_constrained`), the edit simulation
(:mod:`parsing.semi.edits`) and the simulated rounds' interactive partial annotation
(:mod:`parsing.semi.simulate`): it takes fitted members and a fitted ensemble, not a model
directory, so a round's in-memory members use it as the editor's loaded ones do.

A sentence whose unconstrained ensemble tree already holds every forced arc keeps it (the
human confirmed what the ensemble said); a member's unconstrained parse that holds them is
kept too. Otherwise the members parse the sentence with ``predict_constrained`` and the
ensemble combines the ensemble members' constrained trees. With ``adapt``, when the forced
arcs look like a review (:func:`~parsing.ensemble.constrained.reads_like_a_review`) they are
combined instead by an arc vote whose member weights follow each member's agreement with them
in its own unconstrained parse (:func:`~parsing.ensemble.constrained.sentence_weights`).
:func:`~parsing.ensemble.constrained.force_combined` then forces the arcs and labels onto the
combined tree, so every returned tree contains the constraints. With ``previous`` (the trees
shown before this re-parse), a free word keeps its previous label unless the arcs around it
moved (:func:`~parsing.constraints.keep_previous_labels`).

With ``start`` (each member's parses from an earlier re-parse of the same sentences under
constraints that the new ones include: the editor's previous edit), a member whose earlier
constrained parse already holds every new forced arc keeps it instead of decoding again. For
the exact decoders (first-order graph members) and the guided greedy ones (the transition
members: a move that kept the larger set of forced arcs buildable was also the best move among
those that keep it) that is the tree decoding again would give; for beam search and the
second-order graph members it is a tree of the same search under fewer constraints. An
annotator fixing one arc after another then re-decodes only the members that miss the new arc.

A member that reads the forced arcs as inputs (:attr:`~parsing.base.BaseParser.reads_constraints`:
the ``biaffine`` member with ``reveal``) is asked again for every sentence with forced arcs,
its free or earlier parse never kept, and when the ensemble combines such a member its tree is
combined again even where the free tree holds every forced arc: a human arc may move others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from parsing.base import BaseParser
from parsing.constraints import Constraints, finish_parse, keep_previous_labels, validate_all
from parsing.ensemble.base import Ensemble
from parsing.ensemble.constrained import force_combined, reads_like_a_review, sentence_weights, vote_forced
from parsing.ensemble.registry import combine
from parsing.ensemble.voting import ensemble_label_weights, ensemble_vote_weights
from parsing.types import Parse, Sentence

__all__ = ["reparse_under_constraints"]


def reparse_under_constraints(
    parsers: Mapping[str, BaseParser], ensemble: Ensemble, ensemble_members: Sequence[str],
    sentences: Sequence[Sentence], constraints: Sequence[Constraints],
    unconstrained: tuple[Mapping[str, Sequence[Parse]], Sequence[Parse]], *,
    previous: Sequence[Parse] | None = None, adapt: bool = True,
    start: Mapping[str, Sequence[Parse]] | None = None,
) -> tuple[dict[str, list[Parse]], list[Parse]]:
    """Every member's and the ensemble's parses of ``sentences`` under ``constraints`` (module
    docstring).

    Args:
        parsers: fitted members by name; those named in ``unconstrained[0]`` are re-parsed
            (the ensemble's members must be among them).
        ensemble: the fitted combination of ``ensemble_members``.
        ensemble_members: the members the ensemble combines, in its order.
        sentences: the sentences as the members parse them (tagged), ``S`` of them.
        constraints: one :class:`Constraints` per sentence.
        unconstrained: the members' parses (``{name: S parses}``) and the ensemble's ``S``
            trees without constraints; they are not modified.
        previous: the ``S`` trees shown before this re-parse, or ``None``.
        adapt: weight members by their agreement with reviewed arcs.
        start: ``{name: S parses}`` of some members under constraints that ``constraints``
            include (:meth:`~parsing.constraints.Constraints.within`; the caller checks it),
            kept where they hold every forced arc (module docstring).

    Returns:
        ``({name: S parses}, S trees)``: every tree and parse contains its sentence's forced
        arcs and labels.

    Raises:
        ValueError: constraints that do not fit a sentence, or an ensemble member missing
            from ``unconstrained``.
        NotImplementedError: a member without constrained decoding.
    """
    validate_all([len(s) for s in sentences], constraints)
    wanted = list(unconstrained[0])
    missing = [name for name in ensemble_members if name not in unconstrained[0]]
    if missing:
        raise ValueError(f"no unconstrained parses of the ensemble's members {', '.join(missing)}")
    parses = {name: list(unconstrained[0][name]) for name in wanted}
    combined = list(unconstrained[1])
    reading = {name for name in wanted if parsers[name].reads_constraints}
    redo = [i for i, (tree, forced) in enumerate(zip(combined, constraints, strict=True))
            if not forced.satisfied_by(tree.heads) or (forced and reading & set(ensemble_members))]
    weights = ensemble_vote_weights(ensemble, ensemble_members, ensemble_members)
    member_weights = [weights[name] for name in ensemble_members]
    label_weights = ensemble_label_weights(ensemble)  # over ensemble_members, in order; None: member_weights
    own_parses = [[parses[name][i] for name in ensemble_members] for i in redo]
    read = [adapt and reads_like_a_review(combined[i], constraints[i]) for i in redo]
    for name in wanted:  # members re-parse where they (or the ensemble) miss a forced arc
        own = parses[name]
        if name in reading:  # the forced arcs are its inputs: no parse without them stands
            chosen = [i for i, forced in enumerate(constraints) if forced]
        else:
            earlier = start.get(name) if start is not None else None
            kept = set()
            if earlier is not None:
                kept = {i for i, forced in enumerate(constraints)
                        if forced and forced.satisfied_by(earlier[i].heads)}
                for i in kept:
                    own[i] = earlier[i]
            chosen = sorted({*redo, *(i for i, forced in enumerate(constraints)
                                      if not forced.satisfied_by(own[i].heads))} - kept)
        again = parsers[name].predict_constrained([sentences[i] for i in chosen],
                                                  [constraints[i] for i in chosen],
                                                  free=[own[i] for i in chosen])
        for i, parse in zip(chosen, again, strict=True):
            own[i] = parse
        parses[name] = [finish_parse(p, forced) for p, forced in zip(own, constraints, strict=True)]
    if redo:
        recombined = combine(ensemble, list(ensemble_members), [sentences[i] for i in redo],
                             {name: [parses[name][i] for i in redo] for name in ensemble_members})
        for i, tree, own, adapted in zip(redo, recombined, own_parses, read, strict=True):
            combined[i] = tree if not adapted else vote_forced(
                [parses[name][i] for name in ensemble_members],
                sentence_weights(member_weights, own, constraints[i]), constraints[i], label_weights)
    forced_trees = [
        force_combined(tree, [parses[name][i] for name in ensemble_members], member_weights, constraints[i],
                       label_weights)
        for i, tree in enumerate(combined)
    ]
    if previous is not None:
        forced_trees = [keep_previous_labels(tree, before, c)
                        for tree, before, c in zip(forced_trees, previous, constraints, strict=True)]
    return parses, forced_trees
