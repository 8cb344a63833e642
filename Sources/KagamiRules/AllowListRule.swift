/// Charles's Allow List: once any is enabled, only requests to their locations go through; the
/// others get the first enabled rule's action. A Block List match still blocks an allowed request.
public typealias AllowListRule = LocationListRule
