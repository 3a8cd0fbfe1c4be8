"""trec_eval 10.0, reproduced: the ``rankscope trec_eval`` command and its measures.

The command (:func:`rankscope.trec_eval.command.run`) reads trec_eval's
options and files with trec_eval's own rules and prints the same bytes; the
measures are computed for all queries at once on columnar arrays. The same
measures are available to :func:`rankscope.evaluate` under their trec_eval
names (``iprec_at_recall_0.10``, ``gm_map``, ``11pt_avg``...), registered by
:mod:`rankscope.trec_eval.measures`.
"""
