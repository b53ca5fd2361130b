// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20Minimal {
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @title Constant-product pool
/// @notice The local swap venue: one pair of ERC-20 tokens, x * y = k, a fee on the input
/// (Uniswap V2's formula). Real enough that slippage, reverts and gas are real on the local node;
/// not a production AMM (one liquidity provider, the owner; no LP shares, no oracle, no flash swaps).
contract ConstantProductPool {
    uint256 public constant BPS = 10_000;

    address public immutable token0;
    address public immutable token1;
    /// @notice fee taken from the input amount, in basis points
    uint256 public immutable feeBps;
    address public immutable owner;

    uint256 public reserve0;
    uint256 public reserve1;
    /// @dev 1 while a swap or a deposit runs: the tokens are trusted, but a callback token must not re-enter
    uint256 private locked;

    event LiquidityAdded(address indexed provider, uint256 amount0, uint256 amount1);
    event Swap(
        address indexed sender,
        address indexed tokenIn,
        uint256 amountIn,
        uint256 amountOut,
        address indexed to
    );

    error NotOwner(address caller);
    error UnknownToken(address token);
    error Expired(uint256 deadline, uint256 timestamp);
    error InsufficientOutput(uint256 amountOut, uint256 minAmountOut);
    error InsufficientLiquidity();
    error ZeroAmount();
    error TransferFailed(address token);
    error Reentrancy();
    error BadFee(uint256 feeBps);

    constructor(address token0_, address token1_, uint256 feeBps_) {
        if (token0_ == token1_ || token0_ == address(0) || token1_ == address(0)) revert UnknownToken(token1_);
        if (feeBps_ >= BPS) revert BadFee(feeBps_);
        token0 = token0_;
        token1 = token1_;
        feeBps = feeBps_;
        owner = msg.sender;
    }

    modifier nonReentrant() {
        if (locked == 1) revert Reentrancy();
        locked = 1;
        _;
        locked = 0;
    }

    /// @notice The owner deposits both tokens (it must have approved the pool for each).
    function addLiquidity(uint256 amount0, uint256 amount1) external nonReentrant {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        if (amount0 == 0 || amount1 == 0) revert ZeroAmount();
        _pull(token0, msg.sender, amount0);
        _pull(token1, msg.sender, amount1);
        reserve0 += amount0;
        reserve1 += amount1;
        emit LiquidityAdded(msg.sender, amount0, amount1);
    }

    /// @notice What `amountIn` of `tokenIn` buys of the other token at the current reserves.
    function getAmountOut(address tokenIn, uint256 amountIn) public view returns (uint256) {
        (uint256 reserveIn, uint256 reserveOut) = _reserves(tokenIn);
        return _amountOut(amountIn, reserveIn, reserveOut);
    }

    /// @notice Sells exactly `amountIn` of `tokenIn` (pulled from the caller) for the other token,
    /// sent to `to`. Reverts when the output is below `minAmountOut` or the block is past `deadline`.
    function swapExactIn(address tokenIn, uint256 amountIn, uint256 minAmountOut, address to, uint256 deadline)
        external
        nonReentrant
        returns (uint256 amountOut)
    {
        if (block.timestamp > deadline) revert Expired(deadline, block.timestamp);
        if (amountIn == 0) revert ZeroAmount();
        (uint256 reserveIn, uint256 reserveOut) = _reserves(tokenIn);
        amountOut = _amountOut(amountIn, reserveIn, reserveOut);
        if (amountOut < minAmountOut) revert InsufficientOutput(amountOut, minAmountOut);
        address tokenOut = tokenIn == token0 ? token1 : token0;
        _pull(tokenIn, msg.sender, amountIn);
        if (!IERC20Minimal(tokenOut).transfer(to, amountOut)) revert TransferFailed(tokenOut);
        if (tokenIn == token0) {
            reserve0 = reserveIn + amountIn;
            reserve1 = reserveOut - amountOut;
        } else {
            reserve1 = reserveIn + amountIn;
            reserve0 = reserveOut - amountOut;
        }
        emit Swap(msg.sender, tokenIn, amountIn, amountOut, to);
    }

    function _reserves(address tokenIn) private view returns (uint256 reserveIn, uint256 reserveOut) {
        if (tokenIn == token0) return (reserve0, reserve1);
        if (tokenIn == token1) return (reserve1, reserve0);
        revert UnknownToken(tokenIn);
    }

    function _amountOut(uint256 amountIn, uint256 reserveIn, uint256 reserveOut) private view returns (uint256) {
        if (reserveIn == 0 || reserveOut == 0) revert InsufficientLiquidity();
        uint256 inWithFee = amountIn * (BPS - feeBps);
        return (inWithFee * reserveOut) / (reserveIn * BPS + inWithFee);
    }

    function _pull(address token, address from, uint256 amount) private {
        if (!IERC20Minimal(token).transferFrom(from, address(this), amount)) revert TransferFailed(token);
    }
}
