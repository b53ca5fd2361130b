// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20Move {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title Test WithdrawalOutbox
/// @notice A stand-in for the payout side of Derive v3 on L1 (docs/exchange-v3.md "Money out"):
/// the published Sepolia WithdrawalOutbox (packages/exchange/test/spec/v3/withdrawal-outbox.sepolia.abi.json)
/// pays each withdrawal of a proven batch when the batch is submitted: `executeWithdrawals(Withdrawal[])`,
/// callable only by the verifiable app, pushes the amount (in the token's own decimals) from the asset's
/// vault to the recipient and emits `WithdrawalPaid(id, asset, recipient, paid, remaining)`; an id is
/// paid once (`consumed`). Here the verifiable app is one operator address (the Derive simulator's
/// local key) and the vault is the OnchainActionManager stand-in, which holds the deposits and
/// approves this contract (its `approveToken`). Not modelled: the per-recipient throttle and its
/// queue (`WithdrawalEnqueued`, `processQueue`), the guardian, pausing. Test-only.
contract TestWithdrawalOutbox {
    struct Withdrawal {
        bytes32 id;
        uint64 accountId;
        address asset;
        address recipient;
        uint128 amount;
    }

    struct AssetConfig {
        address vault;
        uint64 staticPriceX6;
        address token;
        uint8 decimals;
    }

    address public owner;
    /// the one caller of executeWithdrawals (on Derive: the VerifiableApp contract that checks the batch proof)
    address public immutable VERIFIABLE_APP;
    mapping(bytes32 => bool) public consumed;
    mapping(address => AssetConfig) internal _assets;

    event AssetRegistered(address indexed asset, address indexed token, address indexed vault, uint8 decimals);
    event WithdrawalPaid(
        bytes32 indexed id, address indexed asset, address indexed recipient, uint128 paid, uint128 remaining
    );
    event WithdrawalSkipped(bytes32 indexed id);

    error NotVerifiableApp(address caller);
    error NotOwner(address caller);
    error UnknownAsset(address asset);
    error ZeroAddress();
    error TransferFailed();

    constructor(address verifiableApp) {
        if (verifiableApp == address(0)) revert ZeroAddress();
        owner = msg.sender;
        VERIFIABLE_APP = verifiableApp;
    }

    function registerAsset(address asset, address token, address vault, uint8 tokenDecimals, uint64 staticPriceX6)
        external
    {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        if (asset == address(0) || token == address(0) || vault == address(0)) revert ZeroAddress();
        _assets[asset] = AssetConfig(vault, staticPriceX6, token, tokenDecimals);
        emit AssetRegistered(asset, token, vault, tokenDecimals);
    }

    function assetConfig(address a) external view returns (AssetConfig memory) {
        return _assets[a];
    }

    /// Pays a batch's withdrawals; an id already paid is skipped (a batch submitted twice pays nothing twice).
    function executeWithdrawals(Withdrawal[] calldata withdrawals) external {
        if (msg.sender != VERIFIABLE_APP) revert NotVerifiableApp(msg.sender);
        for (uint256 i = 0; i < withdrawals.length; i++) {
            Withdrawal calldata w = withdrawals[i];
            if (consumed[w.id]) {
                emit WithdrawalSkipped(w.id);
                continue;
            }
            AssetConfig memory c = _assets[w.asset];
            if (c.token == address(0)) revert UnknownAsset(w.asset);
            if (w.recipient == address(0)) revert ZeroAddress();
            consumed[w.id] = true;
            if (!IERC20Move(c.token).transferFrom(c.vault, w.recipient, w.amount)) revert TransferFailed();
            emit WithdrawalPaid(w.id, w.asset, w.recipient, w.amount, 0);
        }
    }
}
