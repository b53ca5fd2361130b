// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice The parts of TestUSDC the messenger uses: it pulls, burns and (as a configured minter) mints.
interface ITestMintBurnToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function burn(uint256 value) external;
    function mint(address to, uint256 value) external;
}

/// @notice The local transmitter's send entry point.
interface ITestRelayerV2 {
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external;
}

/// @title Test TokenMessengerV2
/// @notice Stands in for Circle's CCTP V2 TokenMessengerV2 on the local chains (docs/chains.md "The L2 route"),
/// written for this repository from the published interface: `depositForBurn` with its published signature pulls
/// and burns the sender's token and sends a V2 burn message (version, burn token, mint recipient, amount, message
/// sender, max fee, fee executed, expiration block, hook data) to the remote messenger of the destination domain;
/// `handleReceiveFinalizedMessage` / `handleReceiveUnfinalizedMessage`, called by the local transmitter, mint the
/// amount to the recipient (less the fee the attester executed for a fast transfer, minted to the fee recipient);
/// the `DepositForBurn` and `MintAndWithdraw` events carry the published signatures. `getMinFeeAmount` models the
/// standard-transfer fee switch: a burn whose max fee is below it reverts. Test and local-run only.
contract TestTokenMessengerV2 {
    /// @notice The lowest finality a message may be delivered at (Circle's TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD).
    uint32 public constant MIN_FINALITY_THRESHOLD = 500;
    uint256 private constant BODY_HEADER_LENGTH = 228;

    address public owner;
    address public immutable localMessageTransmitter;
    uint32 public immutable messageBodyVersion;
    address public feeRecipient;
    /// @notice the standard-transfer minimum fee, in hundredths of a basis point of the amount (0: off)
    uint256 public minFee;
    mapping(uint32 => bytes32) public remoteTokenMessengers;
    /// @notice local token of a (remote domain, remote token) pair: what a burn over there mints here
    mapping(bytes32 => address) public localTokens;
    mapping(address => bool) public burnable;

    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);

    error NotOwner(address caller);
    error NotTransmitter(address caller);
    error AmountZero();
    error RecipientZero();
    error MaxFeeNotBelowAmount(uint256 maxFee, uint256 amount);
    error MaxFeeBelowMinimum(uint256 maxFee, uint256 minimum);
    error NoRemoteMessenger(uint32 domain);
    error UnknownRemoteMessenger(uint32 domain, bytes32 sender);
    error TokenNotBurnable(address token);
    error UnknownToken(uint32 domain, bytes32 token);
    error BadBody();
    error FinalityTooLow(uint32 executed);
    error Expired(uint256 expirationBlock);
    error FeeNotBelowAmount(uint256 fee, uint256 amount);

    constructor(address messageTransmitter_, uint32 messageBodyVersion_) {
        owner = msg.sender;
        localMessageTransmitter = messageTransmitter_;
        messageBodyVersion = messageBodyVersion_;
        feeRecipient = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    function addRemoteTokenMessenger(uint32 domain, bytes32 messenger) external onlyOwner {
        remoteTokenMessengers[domain] = messenger;
    }

    /// @notice `token` burns here, and a burn of `remoteToken` on `remoteDomain` mints `token` here.
    function linkTokenPair(address token, uint32 remoteDomain, bytes32 remoteToken) external onlyOwner {
        burnable[token] = true;
        localTokens[keccak256(abi.encodePacked(remoteDomain, remoteToken))] = token;
    }

    function setMinFee(uint256 minFee_) external onlyOwner {
        minFee = minFee_;
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        feeRecipient = feeRecipient_;
    }

    /// @notice The least max fee a burn of `amount` may name (the standard-transfer fee switch), rounded up.
    function getMinFeeAmount(uint256 amount) public view returns (uint256) {
        if (minFee == 0) return 0;
        return (amount * minFee + 999_999) / 1_000_000;
    }

    /// @notice One burn's fields, kept in memory (a dozen locals would not fit the stack).
    struct Burn {
        uint256 amount;
        uint32 destinationDomain;
        bytes32 mintRecipient;
        address burnToken;
        bytes32 destinationCaller;
        uint256 maxFee;
        uint32 minFinalityThreshold;
        bytes32 destinationMessenger;
    }

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        Burn memory b = Burn(
            amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, 0
        );
        _check(b);
        ITestMintBurnToken(burnToken).transferFrom(msg.sender, address(this), amount);
        ITestMintBurnToken(burnToken).burn(amount);
        ITestRelayerV2(localMessageTransmitter).sendMessage(
            destinationDomain, b.destinationMessenger, destinationCaller, minFinalityThreshold, _body(b)
        );
        _emitDeposit(b);
    }

    function _check(Burn memory b) private view {
        if (b.amount == 0) revert AmountZero();
        if (b.mintRecipient == bytes32(0)) revert RecipientZero();
        if (b.maxFee >= b.amount) revert MaxFeeNotBelowAmount(b.maxFee, b.amount);
        uint256 minimum = getMinFeeAmount(b.amount);
        if (b.maxFee < minimum) revert MaxFeeBelowMinimum(b.maxFee, minimum);
        if (!burnable[b.burnToken]) revert TokenNotBurnable(b.burnToken);
        b.destinationMessenger = remoteTokenMessengers[b.destinationDomain];
        if (b.destinationMessenger == bytes32(0)) revert NoRemoteMessenger(b.destinationDomain);
    }

    /// @notice The V2 burn message: its fee executed and expiration block empty (the attester's to fill in).
    function _body(Burn memory b) private view returns (bytes memory) {
        return abi.encodePacked(
            messageBodyVersion,
            bytes32(uint256(uint160(b.burnToken))),
            b.mintRecipient,
            b.amount,
            bytes32(uint256(uint160(msg.sender))),
            b.maxFee,
            uint256(0),
            uint256(0)
        );
    }

    function _emitDeposit(Burn memory b) private {
        emit DepositForBurn(
            b.burnToken,
            b.amount,
            msg.sender,
            b.mintRecipient,
            b.destinationDomain,
            b.destinationMessenger,
            b.destinationCaller,
            b.maxFee,
            b.minFinalityThreshold,
            ""
        );
    }

    function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        returns (bool)
    {
        _checkSender(remoteDomain, sender);
        (address recipient, address token, uint256 amount) = _decode(remoteDomain, messageBody);
        _mint(recipient, token, amount, 0);
        return true;
    }

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool) {
        _checkSender(remoteDomain, sender);
        if (finalityThresholdExecuted < MIN_FINALITY_THRESHOLD) revert FinalityTooLow(finalityThresholdExecuted);
        (address recipient, address token, uint256 amount) = _decode(remoteDomain, messageBody);
        uint256 expirationBlock = uint256(bytes32(messageBody[196:228]));
        if (expirationBlock != 0 && expirationBlock <= block.number) revert Expired(expirationBlock);
        uint256 fee = uint256(bytes32(messageBody[164:196]));
        if (fee != 0 && fee >= amount) revert FeeNotBelowAmount(fee, amount);
        _mint(recipient, token, amount, fee);
        return true;
    }

    function _checkSender(uint32 remoteDomain, bytes32 sender) private view {
        if (msg.sender != localMessageTransmitter) revert NotTransmitter(msg.sender);
        if (sender == bytes32(0) || remoteTokenMessengers[remoteDomain] != sender) {
            revert UnknownRemoteMessenger(remoteDomain, sender);
        }
    }

    function _decode(uint32 remoteDomain, bytes calldata body)
        private
        view
        returns (address recipient, address token, uint256 amount)
    {
        if (body.length < BODY_HEADER_LENGTH || uint32(bytes4(body[0:4])) != messageBodyVersion) revert BadBody();
        bytes32 burnToken = bytes32(body[4:36]);
        token = localTokens[keccak256(abi.encodePacked(remoteDomain, burnToken))];
        if (token == address(0)) revert UnknownToken(remoteDomain, burnToken);
        recipient = address(uint160(uint256(bytes32(body[36:68]))));
        amount = uint256(bytes32(body[68:100]));
    }

    function _mint(address recipient, address token, uint256 amount, uint256 fee) private {
        ITestMintBurnToken(token).mint(recipient, amount - fee);
        if (fee > 0) ITestMintBurnToken(token).mint(feeRecipient, fee);
        emit MintAndWithdraw(recipient, amount - fee, token, fee);
    }
}
