"""trec_eval 10.0, reproduced: the ``rankscope trec_eval`` command.

The command (:func:`rankscope.trec_eval.command.run`) reads trec_eval's
options, reads its files with the trec_eval dialect of the TREC readers
(:mod:`rankscope.data.trec_dialect`), computes the measures with the engine's
kernels (:mod:`rankscope.engine`) and prints the same bytes with the same exit
status. The measures themselves are metric definitions
(:mod:`rankscope.metrics.trec_eval_names`), so :func:`rankscope.evaluate`
accepts the same names (``iprec_at_recall_0.10``, ``gm_map``, ``11pt_avg``...).
"""
