"""``rankscope trec_eval``: conformance, errors, differential tests against trec_eval."""
