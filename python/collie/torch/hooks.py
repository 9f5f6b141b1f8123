# SPDX-License-Identifier: BSD-3-Clause
"""DDP communication hooks whose compression happens in collie, on the wire.

    from collie.torch import hooks
    ddp.register_comm_hook(None, hooks.fp16_compress_hook)    # None: the default group

Each hook has the signature of PyTorch's own (torch.distributed.algorithms.
ddp_comm_hooks.default_hooks): hook(process_group, bucket) -> Future[Tensor],
and averages the bucket's gradients over the group.

On a collie group, fp16_compress_hook and bf16_compress_hook hand the float32
bucket to collie_iallreduce_compressed: each rank's contribution travels as
float16 (bfloat16) and is summed in float32, so they move half the bytes, as
PyTorch's hooks do, but lose less (PyTorch's sum in float16, after dividing by
the group's size, so small gradients underflow).  No Python cast, no extra
copy of the bucket.  A bucket that is not float32 is cast, reduced and copied
back, as PyTorch does.

On any other group (Gloo, MPI) they are PyTorch's hooks, so a script can name
them whatever backend it runs on.

int8_ef_hook and sign_ef_hook go further, with error feedback
(collie_allreduce_ef): 3.9x and 28x fewer bytes than float32, and what each
step's rounding drops is added to the next step's gradients, kept per bucket
in an ErrorFeedbackState (as PyTorch's PowerSGD hook keeps its state):

    ddp.register_comm_hook(hooks.ErrorFeedbackState(), hooks.int8_ef_hook)

They need a collie group (no other backend has these codes).
"""
import collie
import torch
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

from .backend import collie_group_of

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "ErrorFeedbackState",
           "int8_ef_hook", "sign_ef_hook"]

_WIRE = {torch.float16: "float16", torch.bfloat16: "bfloat16"}


def allreduce_hook(process_group, bucket):
    """The bucket's gradients averaged over the group (DDP's default behaviour)."""
    group = collie_group_of(process_group)
    if group is None:
        return default_hooks.allreduce_hook(process_group, bucket)
    buffer = bucket.buffer()
    return group._future(lambda: group.comm.iallreduce(buffer, op="avg"), buffer)


def _compress_hook(wire, fallback, process_group, bucket):
    group = collie_group_of(process_group)
    if group is None:
        return fallback(process_group, bucket)
    buffer = bucket.buffer()
    if buffer.dtype == torch.float32:
        return group._future(
            lambda: group.comm.iallreduce_compressed(buffer, wire=_WIRE[wire], op="avg"), buffer)
    compressed = buffer.to(wire)
    return group._future(lambda: group.comm.iallreduce(compressed, op="avg"), buffer,
                         lambda: buffer.copy_(compressed))


def fp16_compress_hook(process_group, bucket):
    """Like allreduce_hook, with float16 on the wire."""
    return _compress_hook(torch.float16, default_hooks.fp16_compress_hook, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Like allreduce_hook, with bfloat16 on the wire (float32's range: no overflow)."""
    return _compress_hook(torch.bfloat16, default_hooks.bf16_compress_hook, process_group, bucket)


# DDP refuses a hook by this name unless CUDA 11 and NCCL 2.10 are there (torch 1.13 checks
# hook.__name__); collie's needs neither.
bf16_compress_hook.__name__ = "collie_bf16_compress_hook"


class ErrorFeedbackState:
    """What int8_ef_hook and sign_ef_hook keep between steps: one collie.Compressor per
    bucket (its residuals), made on the bucket's first step and again where DDP rebuilds
    its buckets.  process_group: the group the hook averages over (None: the default)."""

    def __init__(self, process_group=None):
        self.process_group = process_group
        self.compressors = {}

    def compressor(self, comm, index, count, kind):
        c = self.compressors.get(index)
        if c is None or c.count != count or c.kind != kind or c.comm is not comm:
            c = self.compressors[index] = collie.Compressor(comm, count, kind)
        return c


def _ef_hook(kind, state, bucket):
    if not isinstance(state, ErrorFeedbackState):
        raise TypeError("collie: register %s_ef_hook with an ErrorFeedbackState: "
                        "ddp.register_comm_hook(hooks.ErrorFeedbackState(), hooks.%s_ef_hook)"
                        % (kind, kind))
    group = collie_group_of(state.process_group)
    if group is None:
        raise RuntimeError("collie: %s_ef_hook needs a collie process group" % kind)
    buffer = bucket.buffer()
    if buffer.dtype != torch.float32:
        raise TypeError("collie: %s_ef_hook takes float32 gradients, not %s" % (kind, buffer.dtype))
    c = state.compressor(group.comm, bucket.index(), buffer.numel(), kind)
    return group._future(lambda: group.comm.iallreduce_ef(buffer, c, op="avg"), buffer)


def int8_ef_hook(state, bucket):
    """The bucket averaged as 8-bit codes with error feedback (collie_allreduce_ef, INT8)."""
    return _ef_hook("int8", state, bucket)


def sign_ef_hook(state, bucket):
    """The bucket averaged as 1-bit codes with error feedback (collie_allreduce_ef, SIGN)."""
    return _ef_hook("sign", state, bucket)
