from polyg_core.testing.fixtures import *  # noqa: F403  # pyright: ignore[reportWildcardImportFromLibrary]
