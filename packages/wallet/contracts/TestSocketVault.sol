// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20Like {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title Test Socket vault
/// @notice A stand-in for the deposit side of a Socket SuperBridge vault (the "old-style" vault
/// Derive's USDC deposits use), with the same external interface the bridge adapter calls:
/// `depositToAppChain(receiver_, amount_, msgGasLimit_, connector_)` (payable, the message fee in
/// native gas), `getMinFees(connector_, msgGasLimit_)`, `getCurrentLockLimit(connector_)`,
/// `token__()` and the `TokensDeposited` event. It pulls the tokens with transferFrom and keeps the
/// fee; nothing is relayed anywhere. Test-only: it must never be deployed where it could be
/// mistaken for a bridge.
contract TestSocketVault {
    address public immutable token__;
    address public owner;
    /// fee quoted per unit of destination gas, in wei
    uint256 public feePerMsgGasWei;
    /// per connector: how much may still be deposited (0: not a connector of this vault)
    mapping(address => uint256) public lockLimit;

    event TokensDeposited(address connector, address depositor, address receiver, uint256 depositAmount);

    error NotOwner(address caller);
    error ConnectorUnavailable();
    error AmountOutsideLimit();
    error ZeroAddressReceiver();
    error ZeroAmount();
    error InsufficientFees(uint256 paid, uint256 needed);
    error TransferFailed();

    constructor(address token_, uint256 feePerMsgGasWei_) {
        token__ = token_;
        owner = msg.sender;
        feePerMsgGasWei = feePerMsgGasWei_;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    function setConnector(address connector_, uint256 lockLimit_) external onlyOwner {
        lockLimit[connector_] = lockLimit_;
    }

    function setFeePerMsgGas(uint256 feePerMsgGasWei_) external onlyOwner {
        feePerMsgGasWei = feePerMsgGasWei_;
    }

    function getMinFees(address connector_, uint256 msgGasLimit_) public view returns (uint256 totalFees) {
        if (lockLimit[connector_] == 0) revert ConnectorUnavailable();
        return feePerMsgGasWei * msgGasLimit_;
    }

    function getCurrentLockLimit(address connector_) external view returns (uint256) {
        return lockLimit[connector_];
    }

    function depositToAppChain(address receiver_, uint256 amount_, uint256 msgGasLimit_, address connector_)
        external
        payable
    {
        if (receiver_ == address(0)) revert ZeroAddressReceiver();
        if (amount_ == 0) revert ZeroAmount();
        uint256 limit = lockLimit[connector_];
        if (limit == 0) revert ConnectorUnavailable();
        if (amount_ > limit) revert AmountOutsideLimit();
        uint256 needed = getMinFees(connector_, msgGasLimit_);
        if (msg.value < needed) revert InsufficientFees(msg.value, needed);
        lockLimit[connector_] = limit - amount_;
        if (!IERC20Like(token__).transferFrom(msg.sender, address(this), amount_)) revert TransferFailed();
        emit TokensDeposited(connector_, msg.sender, receiver_, amount_);
    }
}
