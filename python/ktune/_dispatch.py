"""From torch tensors to a library call: which ktune context serves a tensor's device, its
precision, the stream to launch on, and the check that a call's tensors agree.

A CPU tensor runs on ktune's CPU backend, a CUDA tensor on the CUDA backend of its device (HIP
under a ROCm build of PyTorch), on PyTorch's current stream, so ktune's kernels order with
PyTorch's own work and can be captured in a CUDA graph.
"""
import torch

from . import _native, tuning

PRECISIONS = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def _backend_of(device):
    if device.type == "cpu":
        return "cpu", 0
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return ("hip" if getattr(torch.version, "hip", None) else "cuda"), index
    raise _native.Unsupported(f"ktune: tensors on {device} are not supported (CPU and CUDA/ROCm devices are)")


def context_for(device):
    """The ktune Context that runs on this torch device (made once, then shared)."""
    return _native.shared_context(*_backend_of(device))


def precision_of(op, tensors):
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) != 1:
        raise _native.BadArgument(f"ktune.{op}: the tensors mix dtypes {sorted(str(d) for d in dtypes)}; "
                                  "give them all one of float32, float16, bfloat16")
    dtype = dtypes.pop()
    if dtype not in PRECISIONS:
        raise _native.BadArgument(f"ktune.{op}: dtype {dtype} is not supported (float32, float16, bfloat16)")
    return PRECISIONS[dtype]


def run(op, family, inputs, outputs, dims, precision=None, extra=None):
    """Runs `family` with named input and output tensors (outputs already allocated) and named dims.
    Inputs are made contiguous; every tensor must be on one device. `extra` holds tensors whose
    dtype is not the call's precision (fp32 statistics). Returns nothing: outputs are written."""
    extra = extra or {}
    tensors = list(inputs.values()) + list(outputs.values())
    devices = {t.device for t in tensors + list(extra.values())}
    if len(devices) != 1:
        raise _native.BadArgument(f"ktune.{op}: the tensors are on several devices: {sorted(str(d) for d in devices)}")
    device = devices.pop()
    precision = precision or precision_of(op, tensors)
    context = context_for(device)
    stream = None
    if device.type == "cuda":
        stream = torch.cuda.current_stream(device).cuda_stream
    pointers = {}
    keep = []  # contiguous copies live until the launch is queued (and on the stream, by torch)
    for name, tensor in list(inputs.items()) + list(extra.items()):
        # The kernels read whole 16-byte vectors from each tensor's start: a view at an odd offset
        # (x[1:], a slice of a fused weight) is copied like a non-contiguous one.
        if not tensor.is_contiguous() or tensor.data_ptr() % 16:
            tensor = tensor.contiguous() if not tensor.is_contiguous() else tensor.clone()
            keep.append(tensor)
        pointers[name] = tensor.data_ptr()
    for name, tensor in outputs.items():
        pointers[name] = tensor.data_ptr()
    tuning.resolve(context, family, dims, precision)
    tuning.record(context, family, dims, precision)
    if device.type == "cuda":
        with torch.cuda.device(device):
            context.run(family, pointers, dims, precision, stream)
    else:
        context.run(family, pointers, dims, precision)
