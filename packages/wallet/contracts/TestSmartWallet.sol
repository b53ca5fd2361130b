// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Test smart wallet
/// @notice The smallest stand-in for a smart-contract wallet (a Safe's execTransaction, an ERC-4337
/// account, an exchange's batch payout): its owner makes it call `to` with `value` and `data`, so
/// ETH reaches `to` by an internal call, not by a top-level transaction. The deposit audit's tests
/// use it. Test-only: it guards nothing beyond its owner check.
contract TestSmartWallet {
    address public immutable owner;

    error NotOwner(address caller);
    error CallFailed(bytes reason);

    constructor() payable {
        owner = msg.sender;
    }

    receive() external payable {}

    function execute(address to, uint256 value, bytes calldata data) external returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        (bool ok, bytes memory ret) = to.call{value: value}(data);
        if (!ok) revert CallFailed(ret);
        return ret;
    }
}
