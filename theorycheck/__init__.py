"""theorycheck: derive, integrate and verify implicit-bias claims of GD and SAM on
L-layer linear diagonal networks (Moon, Si, Yun, arXiv 2603.08290)."""

from theorycheck.errors import NotSeparableError, SettingError, TheorycheckError
from theorycheck.setting import Init, Setting

__version__ = "0.1.0"

__all__ = ["Init", "NotSeparableError", "Setting", "SettingError", "TheorycheckError", "__version__"]
