// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice What the message's recipient (the token messenger) answers to a received message.
interface ITestMessageHandlerV2 {
    function handleReceiveFinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);
}

/// @title Test MessageTransmitterV2
/// @notice Stands in for Circle's CCTP V2 MessageTransmitterV2 on the local chains (docs/chains.md "The L2
/// route"), written for this repository from the published interface: `sendMessage` and `receiveMessage` with
/// their published signatures, the `MessageSent` and `MessageReceived` events, the V2 message layout (a 148-byte
/// header: version, source and destination domain, a 32-byte nonce, sender, recipient, destination caller, the
/// minimum finality asked and the finality executed; then the body), the nonce and the finality executed left
/// empty at the source for the attester to fill in, a received message carrying the attester's signature over
/// keccak256(message) (one attester here, Circle's threshold of several elsewhere), and each nonce received once.
/// Test and local-run only.
contract TestMessageTransmitterV2 {
    /// @notice Circle's finality thresholds: 2000 finalized (a standard transfer), 1000 confirmed (fast).
    uint32 public constant FINALITY_THRESHOLD_FINALIZED = 2000;
    uint256 public constant MAX_MESSAGE_BODY_SIZE = 8192;
    uint256 private constant HEADER_LENGTH = 148;
    /// @notice secp256k1's order halved: a signature with a higher s is malleable and refused
    uint256 private constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    uint32 public immutable localDomain;
    uint32 public immutable version;
    address public immutable attester;

    mapping(bytes32 => uint256) public usedNonces;

    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );

    error DomainIsLocal();
    error RecipientZero();
    error BodyTooLarge(uint256 length);
    error MessageTooShort(uint256 length);
    error BadAttestation();
    error WrongDestinationDomain(uint32 domain);
    error WrongCaller(address caller);
    error WrongVersion(uint32 version);
    error NonceUsed(bytes32 nonce);
    error HandlerRefused();

    constructor(uint32 localDomain_, uint32 version_, address attester_) {
        localDomain = localDomain_;
        version = version_;
        attester = attester_;
    }

    /// @notice Emits the message for the attester; its nonce and executed finality are left empty.
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        if (destinationDomain == localDomain) revert DomainIsLocal();
        if (recipient == bytes32(0)) revert RecipientZero();
        if (messageBody.length > MAX_MESSAGE_BODY_SIZE) revert BodyTooLarge(messageBody.length);
        emit MessageSent(
            abi.encodePacked(
                version,
                localDomain,
                destinationDomain,
                bytes32(0),
                bytes32(uint256(uint160(msg.sender))),
                recipient,
                destinationCaller,
                minFinalityThreshold,
                uint32(0),
                messageBody
            )
        );
    }

    /// @notice Delivers an attested message to its recipient, once per nonce.
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool) {
        if (message.length < HEADER_LENGTH) revert MessageTooShort(message.length);
        if (_signer(keccak256(message), attestation) != attester) revert BadAttestation();
        if (uint32(bytes4(message[0:4])) != version) revert WrongVersion(uint32(bytes4(message[0:4])));
        uint32 destinationDomain = uint32(bytes4(message[8:12]));
        if (destinationDomain != localDomain) revert WrongDestinationDomain(destinationDomain);
        bytes32 caller = bytes32(message[108:140]);
        if (caller != bytes32(0) && caller != bytes32(uint256(uint160(msg.sender)))) revert WrongCaller(msg.sender);
        bytes32 nonce = bytes32(message[12:44]);
        if (usedNonces[nonce] != 0) revert NonceUsed(nonce);
        usedNonces[nonce] = 1;
        _deliver(message);
        emit MessageReceived(
            msg.sender,
            uint32(bytes4(message[4:8])),
            nonce,
            bytes32(message[44:76]),
            uint32(bytes4(message[144:148])),
            message[HEADER_LENGTH:]
        );
        return true;
    }

    function _deliver(bytes calldata message) private {
        uint32 sourceDomain = uint32(bytes4(message[4:8]));
        bytes32 sender = bytes32(message[44:76]);
        ITestMessageHandlerV2 recipient = ITestMessageHandlerV2(address(uint160(uint256(bytes32(message[76:108])))));
        uint32 executed = uint32(bytes4(message[144:148]));
        bytes calldata body = message[HEADER_LENGTH:];
        bool ok = executed < FINALITY_THRESHOLD_FINALIZED
            ? recipient.handleReceiveUnfinalizedMessage(sourceDomain, sender, executed, body)
            : recipient.handleReceiveFinalizedMessage(sourceDomain, sender, executed, body);
        if (!ok) revert HandlerRefused();
    }

    /// @notice The signer of a 65-byte signature (r, s, v) over the raw digest; address(0) when invalid.
    function _signer(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
