"""Small PyTorch models shipped with memcore: their definitions and the safetensors
files they load from. Nothing here is imported with ``memcore``: the network modules
import torch, and ``weights`` imports it only to read tensors for torch; the slot
tagger answers with numpy (``memcore.extract.tagger``), so a job that extracts slots
never imports torch.

Training lives in ``runner.train``; nothing here ever trains.
"""
