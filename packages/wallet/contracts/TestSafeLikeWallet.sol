// SPDX-License-Identifier: LGPL-3.0-only
pragma solidity 0.8.37;

/// @title Test Safe-like wallet
/// @notice What ETH sent to a Safe costs: Safe v1.4.1's proxy (its fallback, as `SafeProxy.sol`
/// writes it: the singleton read from slot 0, the `masterCopy()` shortcut, then a delegatecall of
/// everything) in front of a singleton whose receive does what Safe's `NativeCurrencyPaymentFallback`
/// does (emit `SafeReceived`). The outbound policy's budget for ETH to an address with code is
/// measured against it (docs/hostile-world.md "Destinations"). Test-only.
contract TestSafeSingleton {
    event SafeReceived(address indexed sender, uint256 value);

    receive() external payable {
        emit SafeReceived(msg.sender, msg.value);
    }
}

contract TestSafeProxy {
    // slot 0, as Safe's proxy keeps it
    address internal singleton;

    constructor(address _singleton) {
        require(_singleton != address(0), "Invalid singleton address provided");
        singleton = _singleton;
    }

    fallback() external payable {
        assembly {
            let _singleton := and(sload(0), 0xffffffffffffffffffffffffffffffffffffffff)
            // 0xa619486e == keccak("masterCopy()")
            if eq(calldataload(0), 0xa619486e00000000000000000000000000000000000000000000000000000000) {
                mstore(0, _singleton)
                return(0, 0x20)
            }
            calldatacopy(0, 0, calldatasize())
            let success := delegatecall(gas(), _singleton, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if eq(success, 0) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }
}
