// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Test ERC-4337-style account
/// @notice What ETH sent to an ERC-4337 account costs: the ERC-1967 proxy most of them are deployed
/// behind (OpenZeppelin's `ERC1967Proxy`: the implementation read from the EIP-1967 slot, then a
/// delegatecall of everything) in front of an implementation whose receive accepts ETH with no
/// work, as eth-infinitism's `SimpleAccount`, Coinbase Smart Wallet and Kernel do. The outbound
/// policy's budget for ETH to an address with code is measured against it. Test-only.
contract TestErc4337Account {
    address public immutable owner;

    constructor(address _owner) {
        owner = _owner;
    }

    receive() external payable {}
}

contract TestErc1967Proxy {
    // bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;

    constructor(address implementation) {
        assembly {
            sstore(IMPLEMENTATION_SLOT, implementation)
        }
    }

    fallback() external payable {
        assembly {
            let implementation := sload(IMPLEMENTATION_SLOT)
            calldatacopy(0, 0, calldatasize())
            let result := delegatecall(gas(), implementation, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch result
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}
