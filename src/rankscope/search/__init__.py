"""Search endpoints: query live engines (or the embedded one) and keep what they return.

See :mod:`rankscope.search.types` for the contract every endpoint keeps.
"""
