"""The HOT template language: loading, versions, functions, parameters,
conditions and environments. Pure: nothing here does I/O except the loader's
reading of text it is handed, and get_file through an explicit file source."""
