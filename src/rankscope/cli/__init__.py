"""The ``rankscope`` command: thin wrappers that parse arguments and call the library."""
