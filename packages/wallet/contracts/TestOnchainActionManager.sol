// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20Pull {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function approve(address spender, uint256 value) external returns (bool);
}

/// @title Test OnchainActionManager
/// @notice A stand-in for the deposit side of Derive v3's L1 OnchainActionManager, with the
/// published entry points the v3 money path calls: `deposit(asset, amount, subaccountId,
/// fallbackRecipient)` and `depositToNewSubaccount(asset, amount, managerId, owner)`, the
/// `DEPOSIT_TYPE` / `DEPOSIT_TO_NEW_SUBACCOUNT_TYPE` codes, the public action queue's head and
/// running hash, and the `PublicActionQueued` event (signatures as in the verified Sepolia ABI,
/// packages/exchange/test/spec/v3/onchain-action-manager.sepolia.abi.json). `asset` is a protocol
/// asset (what `public/get_currency` names as the spot asset), mapped here by the owner to the
/// ERC-20 it pulls with transferFrom; `amount` is in the token's own decimals. The action's `data`
/// is the call's arguments ABI-encoded in order: the published sources do not show the real
/// contract's encoding, so the Derive simulator (which watches this contract) and this file are
/// the only readers of it. The deposits stay here: this contract also stands in for Derive's spot
/// vault, which the WithdrawalOutbox pays withdrawals out of (`approveToken`: the owner lets the
/// outbox stand-in, contracts/TestWithdrawalOutbox.sol, move a token). Test-only: nothing is
/// relayed anywhere.
contract TestOnchainActionManager {
    uint256 public constant DEPOSIT_TYPE = 1;
    uint256 public constant DEPOSIT_TO_NEW_SUBACCOUNT_TYPE = 2;

    address public owner;
    /// protocol asset => the ERC-20 a deposit of it pulls (0: not depositable)
    mapping(address => address) public tokenOf;
    /// how many public actions were queued; the next one's id is this plus one
    uint256 public publicHeadIndex;
    /// keccak256 over the previous value and each queued action, in order
    bytes32 public publicActionsAcc;

    event PublicActionQueued(
        uint256 indexed actionId, address indexed sender, uint256 indexed actionType, bytes data, bytes32 acc
    );

    error NotOwner(address caller);
    error UnknownAsset(address asset);
    error ZeroAmount();
    error ZeroSubaccount();
    error ZeroManager();
    error ZeroAddress();
    error TransferFailed();

    constructor() {
        owner = msg.sender;
    }

    function setAsset(address asset, address token) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        tokenOf[asset] = token;
    }

    /// lets the withdrawal outbox pay out of the deposits held here (Derive's SpotVault approves its OUTBOX)
    function approveToken(address token, address outbox) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        if (!IERC20Pull(token).approve(outbox, type(uint256).max)) revert TransferFailed();
    }

    function deposit(address asset, uint256 amount, uint64 subaccountId, address fallbackRecipient)
        external
        returns (uint256 actionId)
    {
        if (subaccountId == 0) revert ZeroSubaccount();
        if (fallbackRecipient == address(0)) revert ZeroAddress();
        _pull(asset, amount);
        return _queue(DEPOSIT_TYPE, abi.encode(asset, amount, subaccountId, fallbackRecipient));
    }

    function depositToNewSubaccount(address asset, uint256 amount, uint32 managerId, address owner_)
        external
        returns (uint256 actionId)
    {
        if (managerId == 0) revert ZeroManager();
        if (owner_ == address(0)) revert ZeroAddress();
        _pull(asset, amount);
        return _queue(DEPOSIT_TO_NEW_SUBACCOUNT_TYPE, abi.encode(asset, amount, managerId, owner_));
    }

    function _pull(address asset, uint256 amount) private {
        if (amount == 0) revert ZeroAmount();
        address token = tokenOf[asset];
        if (token == address(0)) revert UnknownAsset(asset);
        if (!IERC20Pull(token).transferFrom(msg.sender, address(this), amount)) revert TransferFailed();
    }

    function _queue(uint256 actionType, bytes memory data) private returns (uint256 actionId) {
        actionId = ++publicHeadIndex;
        bytes32 acc = keccak256(abi.encode(publicActionsAcc, actionId, msg.sender, actionType, data));
        publicActionsAcc = acc;
        emit PublicActionQueued(actionId, msg.sender, actionType, data, acc);
    }
}
