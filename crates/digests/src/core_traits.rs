//! What the MD5 and SHA-256 block cores share: the `digest` block-API traits both implement
//! alike, and the message length their padding encodes.

/// Implements for `$core` the `digest` block-API traits every core here has alike: a hash,
/// 64-byte blocks, an eager buffer, `$out` bytes of output, the algorithm name `$name` and an
/// opaque `Debug`.
macro_rules! block_core_traits {
    ($core:ident, $out:ty, $name:literal) => {
        impl digest::HashMarker for $core {}

        impl digest::block_api::BlockSizeUser for $core {
            type BlockSize = digest::typenum::U64;
        }

        impl digest::block_api::BufferKindUser for $core {
            type BufferKind = digest::block_api::Eager;
        }

        impl digest::block_api::OutputSizeUser for $core {
            type OutputSize = $out;
        }

        impl digest::block_api::AlgorithmName for $core {
            fn write_alg_name(f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($name)
            }
        }

        impl std::fmt::Debug for $core {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($core), " { ... }"))
            }
        }
    };
}

/// The message length in bits that the padding encodes: `blocks` whole 64-byte blocks plus
/// `buffered` bytes, wrapping as MD5 and SHA-256 define it.
pub(crate) fn message_bits(blocks: u64, buffered: usize) -> u64 {
    blocks
        .wrapping_mul(64)
        .wrapping_add(buffered as u64)
        .wrapping_mul(8)
}
