"""Targets as data: tall-data posteriors (:mod:`.tall`) and discrete factor graphs (:mod:`.factor_graph`)."""
