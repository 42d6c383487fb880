//! How the scatters' axes relate across their inputs and output, for
//! tract's axis machinery: `axes_mapping` (which axes are the same axis)
//! and `change_axes` (which axis moves the op can take, and what they
//! become on its other wires). tract's `ChangeAxes` pass uses them to move
//! a transpose through a scatter, or to cancel it against another.
//!
//! Only `Move`s (permutations) are taken, and only those that keep every
//! result bit for bit: ScatterElements' rule is on [`elements_change`],
//! ScatterND's on [`nd_change`].
//!
//! Nothing here names an op of this crate: the homes call these with their
//! attributes.

use tract_core::axes::Axis;
use tract_core::internal::*;
use tract_core::ops::change_axes::AxisOp;

use crate::ops::rewrite::move_chains::{apply_move, identity, is_identity};

/// What a move does to a scatter: its new attribute (the axis, or the
/// layout) and the moves of its wires.
pub(crate) struct Consequence<A> {
    /// The op's attribute after the move: the axis of a ScatterElements,
    /// the `layout` of a ScatterND.
    pub(crate) attribute: A,
    /// The move each of the op's wires (inputs and output) takes.
    pub(crate) wires: TVec<(InOut, AxisOp)>,
}

/// `change` as a move `(from, to)` within `rank`, if it is one.
fn as_move(change: &AxisOp, rank: usize) -> Option<(usize, usize)> {
    match change.canonical().as_ref() {
        AxisOp::Move(from, to) if *from < rank && *to < rank => Some((*from, *to)),
        _ => None,
    }
}

fn letters() -> impl Iterator<Item = char> {
    ('a'..='z').chain('A'..='Z').chain('α'..='ω')
}

/// ScatterElements along `axis`: every axis is one axis of data, indices,
/// updates and output, but `axis`, where data and output are one and
/// indices and updates another (an index value is a position along the
/// data's `axis`, not a coordinate shared with it). An axis where indices
/// are shorter than data is split the same way.
pub(crate) fn elements_axes_mapping(
    axis: usize,
    inputs: &[&TypedFact],
) -> TractResult<AxesMapping> {
    let rank = inputs[0].rank();
    let same_rank = inputs.len() == 3 && inputs[1..].iter().all(|f| f.rank() == rank);
    if !same_rank {
        return AxesMapping::disconnected(inputs, &[inputs[0]]);
    }
    let mut names = letters();
    let mut axes = vec![];
    for i in 0..rank {
        let data = Axis::new(names.next().unwrap_or('?'), 3, 1)
            .input(0, i)
            .output(0, i);
        if i != axis && inputs[1].shape[i] == inputs[0].shape[i] {
            axes.push(data.input(1, i).input(2, i));
        } else {
            axes.push(data);
            axes.push(
                Axis::new(names.next().unwrap_or('?'), 3, 1)
                    .input(1, i)
                    .input(2, i),
            );
        }
    }
    AxesMapping::new(3, 1, axes)
}

/// A move of one wire of a ScatterElements along `axis` (all four wires
/// of rank `rank`): the same move everywhere, the axis following it.
///
/// ScatterElements: data, indices, updates and output have one rank and
/// the update at `(.., i_axis, ..)` lands at the same coordinates but
/// `axis`. Moving the same axis on all four, `axis` following it, moves
/// every update with its destination; the updates landing on one element
/// differ only along `axis`, so their order (row-major in the updates)
/// is unchanged.
pub(crate) fn elements_change(
    axis: usize,
    rank: usize,
    change: &AxisOp,
) -> Option<Consequence<usize>> {
    as_move(change, rank)?;
    let moved = change.transform_axis(axis)?;
    let wires = [InOut::In(0), InOut::In(1), InOut::In(2), InOut::Out(0)]
        .into_iter()
        .map(|io| (io, change.clone()))
        .collect();
    Some(Consequence {
        attribute: moved,
        wires,
    })
}

/// The geometry of a ScatterND, when its facts say it: data rank `r`, tuple
/// length `k`, `batch = q - 1` leading axes of indices and updates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NdAxes {
    /// The rank `r` of data (and output).
    pub(crate) rank: usize,
    /// The length `k` of an index tuple, `indices.shape[-1]`.
    pub(crate) k: usize,
    /// The `q - 1` leading batch axes of indices and updates.
    pub(crate) batch: usize,
}

impl NdAxes {
    /// The geometry of the ScatterND whose `(data, indices, updates)` facts
    /// are `inputs`; `None` when `k` is not a known number or the ranks do
    /// not fit ScatterND's rules.
    pub(crate) fn of(inputs: &[&TypedFact]) -> Option<NdAxes> {
        let (data, indices, updates) = (inputs.first()?, inputs.get(1)?, inputs.get(2)?);
        let q = indices.rank();
        let k = indices.shape.last()?.to_usize().ok()?;
        let rank = data.rank();
        (k <= rank && updates.rank() == q - 1 + rank - k).then_some(NdAxes {
            rank,
            k,
            batch: q - 1,
        })
    }
}

/// ScatterND on `transpose(data, layout)`: data and output share every
/// axis; the view's slice axis `i >= k` (data axis `layout[i]`) is also the
/// updates' axis `batch + i - k`; indices and updates share the batch axes.
pub(crate) fn nd_axes_mapping(
    layout: Option<&[usize]>,
    inputs: &[&TypedFact],
) -> TractResult<AxesMapping> {
    let Some(NdAxes { rank, k, batch }) = NdAxes::of(inputs).filter(|_| inputs.len() == 3) else {
        // Unknown tuple length: data and output only.
        let mut mapping = AxesMapping::disconnected(inputs, &[inputs[0]])?;
        for j in 0..inputs[0].rank() {
            mapping = mapping.linking((InOut::In(0), j), (InOut::Out(0), j))?;
        }
        return Ok(mapping);
    };
    let mut names = letters();
    let mut data_axes: Vec<Axis> = (0..rank)
        .map(|j| {
            Axis::new(names.next().unwrap_or('?'), 3, 1)
                .input(0, j)
                .output(0, j)
        })
        .collect();
    let view = layout.map_or_else(|| identity(rank), TVec::from);
    for i in k..rank {
        data_axes[view[i]] = data_axes[view[i]].clone().input(2, batch + i - k);
    }
    let mut axes = data_axes;
    for b in 0..batch {
        axes.push(
            Axis::new(names.next().unwrap_or('?'), 3, 1)
                .input(1, b)
                .input(2, b),
        );
    }
    axes.push(Axis::new(names.next().unwrap_or('?'), 3, 1).input(1, batch));
    AxesMapping::new(3, 1, axes)
}

/// A move of wire `io` of a ScatterND on `transpose(data, layout)`: the op's
/// new layout (`None`: plain) and the moves of its wires, when it can take
/// it ([`NdAxes`]; indices never).
///
/// ScatterND: the data's first `k` axes (on its view: `layout`) are
/// indexed by the tuples, the others are the slice axes, the updates'
/// axes after the `q - 1` batch axes. A move among the slice axes moves
/// the same slice axis of data, output and updates. A move of the data
/// and output that touches an indexed axis cannot be said to the updates
/// or indices; it goes into `layout` (the view stays the same, the data
/// is stored differently), and so does any move of data and output once
/// the op has a layout, and a move of the updates' slice axes (the
/// view's slice axes follow it). Batch axes never move: tuples are
/// applied in row-major order of the batch, and with duplicates the order
/// decides the result.
pub(crate) fn nd_change(
    layout: Option<&[usize]>,
    geometry: NdAxes,
    io: InOut,
    change: &AxisOp,
) -> Option<Consequence<Option<TVec<usize>>>> {
    let NdAxes { rank, k, batch } = geometry;
    let view = layout.map_or_else(|| identity(rank), TVec::from);
    let normalized = |layout: TVec<usize>| (!is_identity(&layout)).then_some(layout);
    match io {
        InOut::In(0) | InOut::Out(0) => {
            let (from, to) = as_move(change, rank)?;
            let data_wires = [
                (InOut::In(0), change.clone()),
                (InOut::Out(0), change.clone()),
            ];
            if layout.is_none() && from >= k && to >= k {
                // Slice axes: the updates' move with them.
                let updates = AxisOp::Move(from - k + batch, to - k + batch);
                let mut wires: TVec<_> = data_wires.into_iter().collect();
                wires.push((InOut::In(2), updates));
                return Some(Consequence {
                    attribute: None,
                    wires,
                });
            }
            // The view stays; the data's axes are where the move puts them.
            let moved: Option<TVec<usize>> =
                view.iter().map(|&a| change.transform_axis(a)).collect();
            Some(Consequence {
                attribute: normalized(moved?),
                wires: data_wires.into_iter().collect(),
            })
        }
        InOut::In(2) => {
            let (from, to) = as_move(change, batch + rank - k)?;
            if from < batch || to < batch {
                return None;
            }
            let (from, to) = (from - batch, to - batch);
            let updates = (InOut::In(2), change.clone());
            if layout.is_none() {
                let data = AxisOp::Move(from + k, to + k);
                return Some(Consequence {
                    attribute: None,
                    wires: tvec![updates, (InOut::In(0), data.clone()), (InOut::Out(0), data)],
                });
            }
            // The view's slice axes follow the updates'.
            let mut tail: TVec<usize> = view[k..].into();
            if !apply_move(&mut tail, &AxisOp::Move(from, to)) {
                return None;
            }
            let mut moved: TVec<usize> = view[..k].into();
            moved.extend(tail);
            Some(Consequence {
                attribute: normalized(moved),
                wires: tvec![updates],
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YOLO: NdAxes = NdAxes {
        rank: 5,
        k: 1,
        batch: 1,
    };

    #[test]
    fn a_move_among_slice_axes_moves_the_updates_too() {
        let c = nd_change(None, YOLO, InOut::Out(0), &AxisOp::Move(4, 1)).unwrap();
        assert_eq!(c.attribute, None);
        assert!(c.wires.contains(&(InOut::In(2), AxisOp::Move(4, 1))));
    }

    #[test]
    fn a_move_of_the_indexed_axis_goes_into_the_layout() {
        // Data [1, 3, 4, 4, 7] seen as [7, 1, 3, 4, 4]... moved back.
        let c = nd_change(None, YOLO, InOut::In(0), &AxisOp::Move(0, 4)).unwrap();
        assert_eq!(c.attribute.as_deref(), Some(&[4usize, 0, 1, 2, 3][..]));
        assert_eq!(c.wires.len(), 2);
        // And a layout that comes back to the identity is plain again.
        let back = nd_change(
            Some(&[4, 0, 1, 2, 3]),
            YOLO,
            InOut::In(0),
            &AxisOp::Move(4, 0),
        )
        .unwrap();
        assert_eq!(back.attribute, None);
    }

    #[test]
    fn batch_axes_and_indices_never_move() {
        let two_batch = NdAxes {
            rank: 3,
            k: 1,
            batch: 2,
        };
        assert!(nd_change(None, two_batch, InOut::In(2), &AxisOp::Move(0, 1)).is_none());
        assert!(nd_change(None, two_batch, InOut::In(1), &AxisOp::Move(0, 1)).is_none());
        assert!(nd_change(None, two_batch, InOut::In(0), &AxisOp::Add(0)).is_none());
    }

    #[test]
    fn an_updates_move_on_a_layout_reorders_the_view_tail() {
        let c = nd_change(
            Some(&[4, 0, 1, 2, 3]),
            YOLO,
            InOut::In(2),
            &AxisOp::Move(1, 4),
        )
        .unwrap();
        assert_eq!(c.attribute.as_deref(), Some(&[4usize, 1, 2, 3, 0][..]));
        assert_eq!(c.wires.len(), 1);
    }

    #[test]
    fn scatter_elements_moves_its_axis_with_every_wire() {
        let c = elements_change(1, 3, &AxisOp::Move(1, 2)).unwrap();
        assert_eq!(c.attribute, 2);
        assert_eq!(c.wires.len(), 4);
        assert!(elements_change(1, 3, &AxisOp::Rm(0)).is_none());
    }
}
