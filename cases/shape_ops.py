"""Shape and data-movement ops: view/reshape, permute/transpose, expand,
cat/stack, split/chunk/unbind, squeeze/unsqueeze, flatten/unflatten, pad in
every mode, roll, flip, repeat/tile/repeat_interleave, pixel shuffle.
Values pass through unchanged, so every comparison is exact.
"""

import torch
import torch.nn.functional as F

from conformance import Dyn, T, op

from ._common import b8, bf16, dtypes, f16, f32, i32, i64, u8

n = Dyn("n", 3, 6)
m = Dyn("m", 2, 5)
ALL = (f32, f16, bf16, i32, i64, b8)

CASES = [
    # view / reshape / flatten
    *dtypes("view", lambda x: x.view(4, 6), T(2, 3, 4), dtypes=(f32, i64, b8)),
    op("view.infer", lambda x: x.view(-1, 4), T(2, 3, 4)),
    op("reshape", lambda x: x.reshape(3, 8), T(2, 3, 4)),
    op("reshape.flat", lambda x: x.reshape(-1), T(2, 3, 4)),
    op("reshape.add_dims", lambda x: x.reshape(2, 1, 3, 1, 4), T(6, 4)),
    op("reshape.after_transpose", lambda x: x.transpose(0, 1).reshape(-1), T(3, 4)),
    op("flatten", torch.flatten, T(2, 3, 4)),
    op("flatten.range", lambda x: x.flatten(1, 2), T(2, 3, 4, 5)),
    op("unflatten", lambda x: x.unflatten(1, (3, 4)), T(2, 12)),
    op("view.dynamic", lambda x: x.view(-1, 4), T(n, 8), ops=("aten.view",)),
    op("reshape.dynamic", lambda x: x.reshape(x.shape[0], 2, 4), T(n, 8)),
    op("reshape.dyn_merge", lambda x: x.reshape(-1, x.shape[-1]), T(n, m, 4)),
    op("flatten.dynamic", lambda x: x.flatten(1), T(n, 3, 4)),
    op("unflatten.dynamic", lambda x: x.unflatten(1, (2, 4)), T(n, 8)),
    # permute / transpose
    *dtypes("permute", lambda x: x.permute(2, 0, 1), T(2, 3, 4), dtypes=ALL),
    op("permute.4d", lambda x: x.permute(0, 2, 3, 1), T(2, 3, 4, 5)),
    op("permute.neg_dims", lambda x: x.permute(-1, -3, -2), T(2, 3, 4)),
    op("transpose", lambda x: x.transpose(0, 1), T(3, 4)),
    op("transpose.3d", lambda x: x.transpose(-1, -3), T(2, 3, 4)),
    op("t", lambda x: x.t(), T(3, 4)),
    op("movedim", lambda x: x.movedim(0, -1), T(2, 3, 4)),
    op("transpose.mt", lambda x: x.mT, T(2, 3, 4), ops=("aten.mT",)),
    op("permute.dynamic", lambda x: x.permute(1, 0, 2), T(n, m, 4)),
    op("transpose.dynamic", lambda x: x.transpose(0, 1), T(n, 4)),
    # expand / broadcast_to
    *dtypes("expand", lambda x: x.expand(3, 4), T(1, 4), dtypes=(f32, i64, b8)),
    op("expand.new_dims", lambda x: x.expand(2, 3, 4), T(4)),
    op("expand.keep_dims", lambda x: x.expand(-1, 5, -1), T(3, 1, 4)),
    op("expand_as", lambda x, y: x.expand_as(y), T(3, 1), T(3, 5)),
    op("broadcast_to", lambda x: torch.broadcast_to(x, (2, 3, 4)), T(3, 1)),
    op("broadcast_tensors", torch.broadcast_tensors, T(3, 1), T(1, 4), ops=("aten.broadcast_tensors",)),
    op("expand.dynamic", lambda x, y: x.expand(y.shape[0], 4), T(1, 4), T(n, 4)),
    op("broadcast_to.dynamic", lambda x: torch.broadcast_to(x, (2, x.shape[0], 3)), T(n, 1)),
    # cat / stack
    *dtypes("cat", lambda x, y: torch.cat([x, y]), T(2, 4), T(3, 4), dtypes=ALL),
    op("cat.dim1", lambda x, y, z: torch.cat([x, y, z], 1), T(2, 1), T(2, 3), T(2, 2)),
    op("cat.neg_dim", lambda x, y: torch.cat([x, y], -1), T(2, 3, 4), T(2, 3, 1)),
    op("cat.promote", lambda x, y: torch.cat([x, y]), T(2, 4, dtype=i32), T(3, 4)),
    op("cat.with_empty", lambda x, y: torch.cat([x, y]), T(2, 4), T(0, 4)),
    op("cat.same_tensor", lambda x: torch.cat([x, x, x], 1), T(2, 3)),
    op("cat.dynamic", lambda x, y: torch.cat([x, y]), T(n, 4), T(m, 4)),
    op("cat.dyn_other_dim", lambda x, y: torch.cat([x, y], 1), T(n, 2), T(n, 3)),
    # found by `conformance fuzz --backend stablehlo`: promotion and dynamic dims together (IREE sizes a stack buffer from them)
    op("cat.dyn_promote", lambda x, y: torch.cat([x, y], -1), T(n, 2, dtype=f16), T(n, 1)),
    *dtypes("stack", lambda x, y: torch.stack([x, y]), T(3, 4), T(3, 4), dtypes=(f32, f16, i64, b8)),
    op("stack.last_dim", lambda x, y, z: torch.stack([x, y, z], -1), T(3, 4), T(3, 4), T(3, 4)),
    op("hstack", lambda x, y: torch.hstack([x, y]), T(3, 2), T(3, 4), ops=("aten.hstack",)),
    op("vstack", lambda x, y: torch.vstack([x, y]), T(4), T(2, 4), ops=("aten.vstack",)),
    op("stack.dynamic", lambda x, y: torch.stack([x, y], 1), T(n, 4), T(n, 4)),
    # split / chunk / unbind
    op("split", lambda x: torch.split(x, 2), T(6, 3)),
    op("split.uneven", lambda x: torch.split(x, 4, dim=1), T(2, 10)),
    op("split.sizes", lambda x: torch.split(x, [1, 3, 2]), T(6, 3), ops=("aten.split_with_sizes",)),
    op("chunk", lambda x: torch.chunk(x, 3, 1), T(2, 9)),
    op("chunk.uneven", lambda x: torch.chunk(x, 4), T(10, 2)),
    op("tensor_split", lambda x: torch.tensor_split(x, 3), T(7, 2)),
    op("split.dynamic", lambda x: torch.split(x, 2, dim=1), T(n, 6)),
    op("chunk.dynamic", lambda x: torch.chunk(x, 2, -1), T(n, 8)),
    op("unbind.dynamic", lambda x: torch.unbind(x, 1), T(n, 3)),
    # squeeze / unsqueeze
    *dtypes("squeeze", lambda x: x.squeeze(), T(1, 3, 1, 4), dtypes=(f32, i64, b8)),
    op("squeeze.dim", lambda x: x.squeeze(2), T(1, 3, 1, 4)),
    op("squeeze.dims", lambda x: x.squeeze((0, 2)), T(1, 3, 1, 4)),
    op("squeeze.not_size1", lambda x: x.squeeze(1), T(2, 3)),
    op("unsqueeze", lambda x: x.unsqueeze(0), T(3, 4)),
    op("unsqueeze.neg", lambda x: x.unsqueeze(-1), T(3, 4)),
    op("unsqueeze.middle", lambda x: x.unsqueeze(1), T(3, 4)),
    op("squeeze.dynamic", lambda x: x.squeeze(1), T(n, 1, 4)),
    op("unsqueeze.dynamic", lambda x: x.unsqueeze(1), T(n, 4)),
    # pad: constant / reflect / replicate / circular
    op("pad.constant", lambda x: F.pad(x, (1, 2)), T(3, 4)),
    op("pad.constant_value", lambda x: F.pad(x, (1, 1, 2, 0), value=-3.5), T(2, 3, 4)),
    op("pad.constant.i64", lambda x: F.pad(x, (2, 1), value=7), T(3, 4, dtype=i64)),
    op("pad.negative", lambda x: F.pad(x, (-1, 2, 0, -1)), T(4, 5)),
    op("pad.constant_3d", lambda x: F.pad(x, (1, 1, 1, 1, 1, 1)), T(1, 2, 3, 3, 3)),
    op("pad.reflect_1d", lambda x: F.pad(x, (2, 1), mode="reflect"), T(2, 3, 6)),
    op("pad.reflect_2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), T(1, 3, 5, 5)),
    op("pad.reflect_3d", lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect"), T(1, 2, 4, 4, 4)),
    op("pad.replicate_1d", lambda x: F.pad(x, (3, 1), mode="replicate"), T(2, 3, 6)),
    op("pad.replicate_2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"), T(1, 3, 5, 5)),
    op("pad.replicate_3d", lambda x: F.pad(x, (1, 0, 0, 1, 2, 2), mode="replicate"), T(1, 2, 3, 3, 3)),
    op("pad.circular_1d", lambda x: F.pad(x, (2, 3), mode="circular"), T(2, 3, 6)),
    op("pad.circular_2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), T(1, 3, 5, 5)),
    op("pad.reflect.f16", lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"), T(1, 2, 4, 4, dtype=f16)),
    op("pad.dynamic", lambda x: F.pad(x, (1, 2)), T(n, 4)),
    op("pad.dyn_reflect", lambda x: F.pad(x, (1, 1, 1, 1), mode="reflect"), T(m, 3, 5, 5)),
    op("pad.dyn_replicate", lambda x: F.pad(x, (2, 2), mode="replicate"), T(1, 3, n)),
    # roll / flip
    op("roll", lambda x: torch.roll(x, 2, 1), T(3, 5)),
    op("roll.negative", lambda x: torch.roll(x, -1, 0), T(4, 3)),
    op("roll.multi", lambda x: torch.roll(x, (1, -2), (0, 1)), T(3, 5)),
    op("roll.flat", lambda x: torch.roll(x, 4), T(3, 5)),
    op("roll.larger_than_size", lambda x: torch.roll(x, 7, 1), T(3, 5)),
    *dtypes("flip", lambda x: torch.flip(x, (0,)), T(3, 4), dtypes=(f32, i32, b8)),
    op("flip.dims", lambda x: torch.flip(x, (0, 2)), T(2, 3, 4)),
    op("flip.neg_dim", lambda x: torch.flip(x, (-1,)), T(2, 3, 4)),
    op("fliplr", torch.fliplr, T(3, 4)),
    op("roll.dynamic", lambda x: torch.roll(x, 1, 0), T(n, 4)),
    op("flip.dynamic", lambda x: torch.flip(x, (0, 1)), T(n, m)),
    # repeat / tile / repeat_interleave
    *dtypes("repeat", lambda x: x.repeat(2, 3), T(2, 3), dtypes=(f32, i64, b8)),
    op("repeat.new_dims", lambda x: x.repeat(2, 1, 2), T(2, 3)),
    op("tile", lambda x: torch.tile(x, (2,)), T(2, 3), ops=("aten.tile",)),
    op("tile.more_dims", lambda x: torch.tile(x, (2, 1, 3)), T(2, 3), ops=("aten.tile",)),
    op("repeat_interleave", lambda x: torch.repeat_interleave(x, 2, 0), T(3, 4)),
    op("repeat_interleave.dim1", lambda x: x.repeat_interleave(3, dim=1), T(3, 4), ops=("aten.repeat_interleave",)),
    op("repeat.dynamic", lambda x: x.repeat(2, 1), T(n, 4)),
    op("tile.dynamic", lambda x: torch.tile(x, (1, 3)), T(n, 4), ops=("aten.tile",)),
    op("repeat_interleave.dynamic", lambda x: torch.repeat_interleave(x, 2, 1), T(n, 4)),
    # pixel shuffle, channel layouts
    op("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), T(1, 8, 3, 3)),
    op("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), T(1, 2, 4, 6)),
    op("pixel_shuffle.dynamic", lambda x: F.pixel_shuffle(x, 2), T(n, 8, 3, 3)),
    # copies and clones
    op("clone", torch.clone, T(3, 4)),
    op("contiguous", lambda x: x.t().contiguous(), T(3, 4)),
    op("clone.u8", torch.clone, T(3, 4, dtype=u8), ops=("aten.clone",)),
    # views of views
    op("view.chain", lambda x: x.view(6, 4).t().reshape(2, 12).unsqueeze(0)[:, :, ::3], T(2, 3, 4), ops=("aten.view", "aten.t", "aten.reshape")),
    op("unfold", lambda x: x.unfold(1, 3, 2), T(2, 9)),
]
