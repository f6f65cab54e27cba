"""Small PyTorch models shipped with memcore: their definitions, features and the
safetensors files they load from. Importing this package imports torch, so the
extractor and policy that use it import it lazily (``import memcore`` stays fast).

Training lives in ``runner.train``; nothing here ever trains.
"""

from memcore.learned.forget_net import ForgetNet, forget_features
from memcore.learned.tagger_net import TaggerNet, featurize
from memcore.learned.weights import (
    WEIGHTS_DIR,
    WeightsFile,
    load_weights,
    save_weights,
    weights_path,
)

__all__ = [
    "WEIGHTS_DIR",
    "ForgetNet",
    "TaggerNet",
    "WeightsFile",
    "featurize",
    "forget_features",
    "load_weights",
    "save_weights",
    "weights_path",
]
