// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Balance reader (deployless)
/// @notice Never deployed. Its creation code is sent as the data of an `eth_call` without `to`,
/// with the addresses packed 20 bytes each as its one argument; the constructor returns the native
/// balance of each address, in order, 16 bytes each (big-endian), instead of runtime code. One call
/// reads the balances of a whole batch of deposit addresses at one block (docs/chains.md "Every
/// deposit is accounted for"), on any node, without a contract at a known address.
///
/// Packed, because what a constructor returns is code: at most 24,576 bytes (EIP-170), so 1,536
/// balances of 16 bytes, where ABI words (32 bytes each) would stop at 766. 16 bytes hold
/// 3.4 * 10^20 ETH, far above all there is; a larger balance (a test chain's) reverts rather than
/// being cut.
contract BalanceReader {
    error PackedAddressesLength(uint256 length);
    error BalanceAbove128Bits(address account);

    constructor(bytes memory packed) {
        if (packed.length % 20 != 0) revert PackedAddressesLength(packed.length);
        uint256 n = packed.length / 20;
        bytes memory out = new bytes(n * 16);
        for (uint256 i = 0; i < n; ++i) {
            address account;
            uint256 wei_;
            assembly {
                account := shr(96, mload(add(add(packed, 0x20), mul(i, 20))))
                wei_ := balance(account)
            }
            if (wei_ > type(uint128).max) revert BalanceAbove128Bits(account);
            assembly {
                // ascending: each word's low half is overwritten by the next balance (the last one's
                // lands past `out`, in memory nothing else uses)
                mstore(add(add(out, 0x20), mul(i, 16)), shl(128, wei_))
            }
        }
        assembly {
            return(add(out, 0x20), mload(out))
        }
    }
}
