//! R's bytes on the wire: primitives decoded and encoded (XDR, ASCII, native), the container and header.

pub mod decode;
pub mod encode;
pub mod header;
