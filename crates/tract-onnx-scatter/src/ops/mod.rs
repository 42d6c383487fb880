//! Typed ops: what a tract `TypedModel` holds once the ONNX graph is typed.

pub mod block_assignment;
pub mod copy_target;
pub mod fresh_buffer;
pub mod output_pool;
pub mod scatter_elements;
pub mod scatter_elements_update;
pub mod scatter_grad;
pub mod scatter_nd;
pub mod shapes;
pub mod tensor_scatter;
pub mod transpose_fold;
pub mod types;

pub use scatter_elements::ScatterElements;
pub use scatter_elements_update::ScatterElementsUpdate;
pub use scatter_grad::{GradKind, ScatterGrad};
pub use scatter_nd::ScatterNd;
pub use tensor_scatter::TensorScatter;
