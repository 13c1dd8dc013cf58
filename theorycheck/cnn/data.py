"""The image sets of the CNN experiment: :mod:`theorycheck.imagedata` (a setting-stage module,
shared with the pixel networks) under its former name. The alias is the module itself, so
that patching an attribute here patches what the loaders see."""

import sys

from theorycheck import imagedata as _imagedata

sys.modules[__name__] = _imagedata
