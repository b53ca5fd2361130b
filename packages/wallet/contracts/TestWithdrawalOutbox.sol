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
/// consumed once (a second time it is skipped: `WithdrawalSkipped`). Here the verifiable app is one
/// operator address (the Derive simulator's local key) and the vault is the OnchainActionManager
/// stand-in, which holds the deposits and approves this contract (its `approveToken`).
///
/// The per-recipient throttle and its queue, with the published signatures and events: the owner
/// sets a token bucket per (recipient, asset) with `setBucketLimit(recipient, asset, capacity,
/// refillRate)` (`BucketLimitSet`; the bucket starts full). A withdrawal to a throttled recipient
/// is paid what the bucket holds (`WithdrawalPaid(id, …, paid, remaining)` when it pays anything)
/// and the rest is queued (`WithdrawalEnqueued(id, asset, recipient, remaining, recipient, asset,
/// queueIndex)`); while the recipient's queue is not empty a new withdrawal is queued whole behind
/// it (first in, first out). `processQueue(recipient, asset, maxItems)`, callable by anyone (on
/// Derive: a keeper; locally: the simulator's L1 payer), pays queued entries from the refilled
/// bucket, oldest first, each payment a `WithdrawalPaid` for the entry's id with what it still owes
/// as `remaining`, so one id can be paid in several parts, the last with `remaining` 0.
/// `queueLength`, `queueEntry`, `throttleFor` and `pendingBucket` (the bucket as it would be
/// refilled now) read it. No limit set: unthrottled, paid whole at once.
///
/// Simplified: the real outbox values the bucket in USD through each asset's static price
/// (`staticPriceX6`, `usdValue`) and may share a bucket between recipients (`bucketKey`); here the
/// capacity and the refill (per second) are in the asset's own token units and each (recipient,
/// asset) has its own bucket. Safe for our tests: they withdraw USDC only, whose static price is 1,
/// and the platform's hot wallet is the only recipient the treasury follows. Not modelled: the
/// guardian (`WithdrawalDiverted`, `guardianProcess`, `guardianRefill`), pausing, native ETH, the
/// static price's use. Test-only.
contract TestWithdrawalOutbox {
    struct Withdrawal {
        bytes32 id;
        uint64 accountId;
        address asset;
        address recipient;
        uint128 amount;
    }

    struct QueuedWithdrawal {
        bytes32 id;
        address asset;
        uint64 accountId;
        address recipient;
        uint128 remainingAmount;
    }

    struct AssetConfig {
        address vault;
        uint64 staticPriceX6;
        address token;
        uint8 decimals;
    }

    /// a token bucket: `bucket` as of `lastRefill` (unix seconds), refilled by `refillRate` a second up to `capacity`
    struct Throttle {
        uint64 capacity;
        uint64 refillRate;
        uint64 bucket;
        uint64 lastRefill;
    }

    struct Queue {
        uint256 head;
        QueuedWithdrawal[] items;
    }

    address public owner;
    /// the one caller of executeWithdrawals (on Derive: the VerifiableApp contract that checks the batch proof)
    address public immutable VERIFIABLE_APP;
    mapping(bytes32 => bool) public consumed;
    mapping(address => AssetConfig) internal _assets;
    /// recipient => asset => its bucket (capacity 0: unthrottled)
    mapping(address => mapping(address => Throttle)) internal _throttles;
    /// recipient => asset => its queue (entries before `head` are paid)
    mapping(address => mapping(address => Queue)) internal _queues;

    event AssetRegistered(address indexed asset, address indexed token, address indexed vault, uint8 decimals);
    event BucketLimitSet(address indexed recipient, address indexed asset, uint64 capacity, uint64 refillRate);
    event WithdrawalPaid(
        bytes32 indexed id, address indexed asset, address indexed recipient, uint128 paid, uint128 remaining
    );
    event WithdrawalEnqueued(
        bytes32 indexed id,
        address indexed asset,
        address indexed recipient,
        uint128 amount,
        address bucketRecipient,
        address bucketAsset,
        uint256 queueIndex
    );
    event WithdrawalSkipped(bytes32 indexed id);

    error NotVerifiableApp(address caller);
    error NotOwner(address caller);
    error UnknownAsset(address asset);
    error ZeroAddress();
    error TransferFailed();
    error BucketConfigTooRestrictive();

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

    /// Throttles what `recipient` is paid of `asset`: a bucket of `capacity` token units, refilled by
    /// `refillRate` a second. A new limit starts full; both must be positive (a queue that never drains is refused).
    function setBucketLimit(address recipient, address asset, uint64 capacity, uint64 refillRate) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        if (recipient == address(0) || asset == address(0)) revert ZeroAddress();
        if (capacity == 0 || refillRate == 0) revert BucketConfigTooRestrictive();
        _throttles[recipient][asset] = Throttle(capacity, refillRate, capacity, uint64(block.timestamp));
        emit BucketLimitSet(recipient, asset, capacity, refillRate);
    }

    function throttleFor(address recipient, address asset) external view returns (Throttle memory) {
        return _throttles[recipient][asset];
    }

    /// The bucket refilled to now (what a payment could take); 0 when unthrottled.
    function pendingBucket(address recipient, address asset) external view returns (uint64) {
        return _refilled(_throttles[recipient][asset]);
    }

    function queueLength(address recipient, address asset) external view returns (uint256) {
        Queue storage q = _queues[recipient][asset];
        return q.items.length - q.head;
    }

    /// The `index`-th entry still queued (0: the next one paid).
    function queueEntry(address recipient, address asset, uint256 index)
        external
        view
        returns (QueuedWithdrawal memory)
    {
        Queue storage q = _queues[recipient][asset];
        return q.items[q.head + index];
    }

    /// Pays a batch's withdrawals; an id already consumed is skipped (a batch submitted twice pays nothing twice).
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
            Throttle storage t = _throttles[w.recipient][w.asset];
            if (t.capacity == 0) {
                _pay(c, w.id, w.asset, w.recipient, w.amount, 0);
                continue;
            }
            _refill(t);
            Queue storage q = _queues[w.recipient][w.asset];
            // behind a non-empty queue nothing is paid first: the queue keeps its order
            uint128 paid = q.items.length > q.head ? 0 : _min(t.bucket, w.amount);
            uint128 remaining = w.amount - paid;
            if (paid > 0) {
                t.bucket -= uint64(paid);
                _pay(c, w.id, w.asset, w.recipient, paid, remaining);
            }
            if (remaining > 0) {
                q.items.push(QueuedWithdrawal(w.id, w.asset, w.accountId, w.recipient, remaining));
                emit WithdrawalEnqueued(
                    w.id, w.asset, w.recipient, remaining, w.recipient, w.asset, q.items.length - 1
                );
            }
        }
    }

    /// Pays up to `maxItems` queued entries of (recipient, asset) from its refilled bucket, oldest first;
    /// stops at an entry the bucket cannot finish (paid in part). Anyone may call it; an empty queue or bucket pays nothing.
    function processQueue(address recipient, address asset, uint256 maxItems) external {
        Throttle storage t = _throttles[recipient][asset];
        Queue storage q = _queues[recipient][asset];
        if (q.items.length == q.head) return;
        _refill(t);
        AssetConfig memory c = _assets[asset];
        for (uint256 n = 0; n < maxItems && q.head < q.items.length && t.bucket > 0; n++) {
            QueuedWithdrawal storage e = q.items[q.head];
            uint128 paid = _min(t.bucket, e.remainingAmount);
            uint128 remaining = e.remainingAmount - paid;
            t.bucket -= uint64(paid);
            e.remainingAmount = remaining;
            if (remaining == 0) q.head++;
            _pay(c, e.id, asset, recipient, paid, remaining);
        }
    }

    function _pay(AssetConfig memory c, bytes32 id, address asset, address recipient, uint128 paid, uint128 remaining)
        internal
    {
        if (!IERC20Move(c.token).transferFrom(c.vault, recipient, paid)) revert TransferFailed();
        emit WithdrawalPaid(id, asset, recipient, paid, remaining);
    }

    function _refilled(Throttle memory t) internal view returns (uint64) {
        if (t.capacity == 0) return 0;
        uint256 v = uint256(t.bucket) + (block.timestamp - t.lastRefill) * uint256(t.refillRate);
        return v > t.capacity ? t.capacity : uint64(v);
    }

    function _refill(Throttle storage t) internal {
        t.bucket = _refilled(t);
        t.lastRefill = uint64(block.timestamp);
    }

    function _min(uint64 a, uint128 b) internal pure returns (uint128) {
        return uint128(a) < b ? uint128(a) : b;
    }
}
