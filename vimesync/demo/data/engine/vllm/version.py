__version__ = "0.11.0"
__version_tuple__ = (0, 11, 0)
