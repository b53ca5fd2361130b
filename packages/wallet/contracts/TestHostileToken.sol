// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Test hostile token
/// @notice A 6-decimal ERC-20 standing in for USDC in the hostile-destination suite
/// (test/adversarial/hostile-destinations.test.ts): a plain ERC-20 for every address, except the
/// recipients its owner marks, whose transfers it blocks (reverts, as USDC does for an address it
/// blacklisted), charges a fee on (the recipient gets less, as a fee-on-transfer token does), or
/// answers `false` to without moving anything (as some tokens do instead of reverting). The owner
/// can mark a recipient at any time, so the suite changes a destination's fate between a
/// withdrawal's request, its signing and its mining. Test-only.
contract TestHostileToken {
    string public constant name = "Test Hostile USDC";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;

    uint8 public constant NORMAL = 0;
    uint8 public constant BLOCKED = 1;
    uint8 public constant FEE = 2;
    uint8 public constant RETURNS_FALSE = 3;
    /// @notice the share a FEE recipient loses, in basis points
    uint256 public constant FEE_BPS = 100;

    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => uint8) public modeOf;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error NotOwner(address caller);
    error Blocked(address account);
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address spender, uint256 allowance, uint256 needed);

    constructor() {
        owner = msg.sender;
    }

    function setMode(address recipient, uint8 mode) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        modeOf[recipient] = mode;
    }

    function mint(address to, uint256 value) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        return _transfer(msg.sender, to, value);
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance(msg.sender, allowed, value);
            allowance[from][msg.sender] = allowed - value;
        }
        return _transfer(from, to, value);
    }

    function _transfer(address from, address to, uint256 value) private returns (bool) {
        uint8 mode = modeOf[to];
        if (mode == BLOCKED || modeOf[from] == BLOCKED) revert Blocked(mode == BLOCKED ? to : from);
        if (mode == RETURNS_FALSE) return false;
        uint256 balance = balanceOf[from];
        if (balance < value) revert InsufficientBalance(from, balance, value);
        uint256 fee = mode == FEE ? (value * FEE_BPS) / 10_000 : 0;
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value - fee;
        emit Transfer(from, to, value - fee);
        if (fee > 0) {
            balanceOf[owner] += fee;
            emit Transfer(from, owner, fee);
        }
        return true;
    }
}
